/**
 * The dashboard is served at / and the board works in a real Chromium against a real server:
 * sign-in, create a ticket, drag it to another column (mouse) and move it by keyboard only, a
 * ticket created through the API appears live, a read-only key sees no create button, no
 * request leaves the server, no serious accessibility violation. At 1280 px and 390 px wide.
 */
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { WIDTHS, axeViolations, screenshot, useDashboard } from './harness.ts';

describe.each(DATABASES)('dashboard board (%s)', (kind) => {
  const dashboard = useDashboard(kind);

  it('serves the page with a strict CSP and its assets from the server', async () => {
    const { url } = dashboard();
    const page = await fetch(url + '/', { headers: { 'accept-encoding': 'gzip' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await page.text();
    const script = /src="(\/assets\/dashboard\.js[^"]*)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(url + script!);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(url + '/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('refuses a wrong key with the API message and keeps nothing', async () => {
    const page = await dashboard().page(1280);
    await page.goto(dashboard().url + '/');
    await screenshot(page, 'signin', 1280);
    await page.getByLabel('Organization').fill('default');
    await page.getByLabel('API key').fill('drv_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/key/i);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  describe.each(WIDTHS)('at %i px', (width) => {
    it('creates a ticket and drags it from Backlog to In progress', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      expect(await page.evaluate('Object.keys(sessionStorage)')).toEqual(['drover.session']);
      expect(await page.evaluate('localStorage.length')).toBe(0);
      await page.getByRole('button', { name: 'New ticket' }).click();
      const title = `Drag me ${width}`;
      await page.getByLabel('Title').fill(title);
      await page.getByLabel('Description').fill('Made in the browser test');
      await page.getByLabel('Labels (comma-separated)').fill('ui, test');
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create ticket' }).click();
      const card = page.locator('.card', { hasText: title });
      await expect.poll(() => card.count(), { timeout: 5_000 }).toBe(1);
      const slug = (await card.getAttribute('data-slug'))!;
      expect(await page.locator('[data-status="backlog"] .card', { hasText: title }).count()).toBe(1);
      const created = await d.api<{ ticket: { description: string; labels: string[] } }>('GET', `/tickets/${slug}`);
      expect(created.body.ticket.description).toBe('Made in the browser test');
      expect(created.body.ticket.labels).toEqual(['ui', 'test']);

      const target = page.locator('[data-status="in_progress"]');
      await target.scrollIntoViewIfNeeded();
      await card.dragTo(target);
      await expect.poll(async () => (await d.api<{ ticket: { status: string } }>('GET', `/tickets/${slug}`)).body.ticket.status, { timeout: 5_000 }).toBe('in_progress');
      expect(await page.locator('[data-status="in_progress"] .card', { hasText: title }).count()).toBe(1);
      await screenshot(page, 'board', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });

    it('moves a ticket by keyboard only', async () => {
      const d = dashboard();
      const made = await d.api<{ ticket: { slug: string } }>('POST', '/tickets', { type: 'task', title: `Keyboard ${width}`, status: 'todo' });
      const slug = made.body.ticket.slug;
      const page = await d.signedIn(width);
      const handle = page.getByRole('button', { name: `Move ${slug}` });
      await handle.waitFor();
      await handle.focus();
      await page.keyboard.press('Space');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await d.api<{ ticket: { status: string } }>('GET', `/tickets/${slug}`)).body.ticket.status, { timeout: 5_000 }).toBe('in_review');
      expect(await page.locator(`[data-status="in_review"] [data-slug="${slug}"]`).count()).toBe(1);
      await page.context().close();
    });

    it('shows a ticket created through the API without a reload', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.locator('.board[data-loaded="true"]').waitFor();
      await page.locator('.live-live').waitFor({ timeout: 20_000 });
      const title = `From the API ${width} ${Date.now()}`;
      await d.api('POST', '/tickets', { type: 'bug', title, priority: 'urgent' });
      await page.locator('[data-status="backlog"] .card', { hasText: title }).waitFor({ timeout: 1_000 });
      await page.context().close();
    });

    it('a key with only tickets:read sees the board but no create button', async () => {
      const d = dashboard();
      const key = await d.keyWith(['tickets:read']);
      await d.api('POST', '/tickets', { type: 'task', title: `Read only ${width}` });
      const page = await d.signedIn(width, key);
      await page.locator('.card', { hasText: `Read only ${width}` }).first().waitFor();
      expect(await page.getByRole('button', { name: 'New ticket' }).count()).toBe(0);
      expect(await page.locator('.move').count()).toBe(0);
      const links = await page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents();
      expect(links).toEqual(['Board']);
      await page.goto(d.url + '/#/pods');
      await page.getByText('lacks the pods:read scope').waitFor();
      await page.context().close();
    });
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
