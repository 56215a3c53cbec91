/**
 * The dashboard bugs of issue 26, one assertion each (docs/dashboard.md): no horizontal overflow at
 * 390 px with a 300-character title; card labels kept after a reload; runners by name; no stale
 * "not found" banner nor a previous run's data after navigating; runs titled as addressed; every
 * callback attempt and Redeliver; cancelled runs counted; channel messages with author, safe
 * markdown and links; runner labels; a favicon (no 404); empty states that help; the loop form;
 * data marked stale while the stream reconnects.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { WIDTHS, axeViolations, useDashboard, waitForTicketLine } from './harness.ts';

/** The page's width as laid out (wider than the viewport when something overflows). */
const pageWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth') as Promise<number>;
/** Navigates within the app, as a click on a link would (no reload). */
const setHash = (page: Page, hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);

/**
 * A network drop, simulated in the page: `dropEvents()` cuts the event stream's connection and
 * makes new ones fail until `blockEvents = false`.
 */
const DROPPABLE_EVENTS = `(() => {
  const original = window.fetch.bind(window);
  const open = [];
  window.blockEvents = false;
  window.dropEvents = () => { window.blockEvents = true; for (const c of open.splice(0)) c.abort(); };
  window.fetch = (input, init = {}) => {
    const url = String(input instanceof Request ? input.url : input).split('?')[0];
    if (!url.endsWith('/events')) return original(input, init);
    if (window.blockEvents) return Promise.reject(new TypeError('network down'));
    const c = new AbortController();
    if (init.signal) init.signal.addEventListener('abort', () => c.abort());
    open.push(c);
    return original(input, { ...init, signal: c.signal });
  };
})();`;

describe.each(DATABASES)('dashboard fixes (%s)', (kind) => {
  const dashboard = useDashboard(kind, { DROVER_WEBHOOK_ALLOW_PRIVATE: 'true' });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // The first attempt of each run's callback fails (500), its retry (5 s later) succeeds.
    receiver = await startWebhookReceiver({ reply: (hit) => (receiver.hitsFor(hit.webhookId) === 1 ? 500 : 200) });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('says what to do where a list is empty (before anything exists)', async () => {
    const d = dashboard();
    const page = await d.signedIn(1280);
    await page.goto(`${d.url}/#/channels`);
    await page.getByText('No channels yet. A channel is where agents and people talk').waitFor();
    await page.goto(`${d.url}/#/loops`);
    await page.getByText('No loops yet. A loop runs an agent').waitFor();
    await page.goto(`${d.url}/#/pods`);
    await page.getByText('No pods yet. New pod starts an agent on a runner').waitFor();
    // An org without people: the board's assignee filter still picks (nobody to pick), no id typed.
    await page.goto(`${d.url}/#/board`);
    const assignee = page.getByRole('form', { name: 'Filters' }).getByLabel('Assignee');
    await expect.poll(() => assignee.evaluate((e) => e.tagName), { timeout: 15_000 }).toBe('SELECT');
    expect(await assignee.locator('option').allTextContents()).toEqual(['Anyone']);
    await page.context().close();
  });

  it('has a favicon: a load asks for nothing that is not there', async () => {
    const d = dashboard();
    const page = await d.page(1280);
    const missing: string[] = [];
    page.on('response', (r) => r.status() === 404 && missing.push(r.url()));
    await page.goto(d.url + '/');
    await page.getByLabel('API key').waitFor();
    expect(await page.locator('link[rel="icon"]').count()).toBe(1);
    await page.waitForLoadState('networkidle');
    expect(missing).toEqual([]);
    await page.context().close();
  });

  it('does not overflow at 390 px with a 300-character unbroken title, on the board and the ticket page', async () => {
    const d = dashboard();
    const made = await d.api<{ ticket: { slug: string } }>('POST', '/tickets', { type: 'task', title: 'W'.repeat(300) });
    const page = await d.signedIn(390);
    await page.locator('.board[data-loaded="true"]').waitFor();
    await page.locator(`[data-slug="${made.body.ticket.slug}"]`).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await page.goto(`${d.url}/#/tickets/${made.body.ticket.slug}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.locator('dl.facts').first().waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await page.context().close();
  });

  describe.each(WIDTHS)('at %i px', (width) => {
    it('keeps card labels after a reload', async () => {
      const d = dashboard();
      const title = `Labelled ${width}`;
      await d.api('POST', '/tickets', { type: 'task', title, labels: ['frontend', `w${width}`] });
      const page = await d.signedIn(width);
      const card = page.locator('.card', { hasText: title });
      await card.waitFor();
      await page.reload();
      await card.waitFor();
      expect(await card.locator('.tag.label').allTextContents()).toEqual(expect.arrayContaining(['frontend', `w${width}`]));
      await page.context().close();
    });

    it('shows runners by name, and their labels in a column', async () => {
      const d = dashboard();
      const runner = (await d.api<{ runners: Array<{ id: number; name: string; labels: string[] }> }>('GET', '/runners')).body.runners[0];
      const created = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "echo named"' });
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/pods/${created.body.pod.pod_key}`);
      const link = page.locator('dl.facts a[href^="#/runners/"]');
      await expect.poll(() => link.textContent(), { timeout: 30_000 }).toBe(runner.name);
      await page.goto(`${d.url}/#/runners`);
      await page.getByRole('columnheader', { name: 'Labels' }).waitFor();
      expect(await page.locator(`tr[data-runner="${runner.id}"] [data-testid="runner-labels"]`).textContent()).toBe(runner.labels.join('') || '—');
      await page.context().close();
    });

    it('moves between runs by URL without a stale banner or the previous run’s data; titles a run as it is addressed; lists every callback attempt and redelivers', async () => {
      const d = dashboard();
      const loop = await d.api<{ loop: { slug: string } }>('POST', '/loops', { name: `Runs ${width}`, agent_slug: 'shell', execution_mode: 'direct', prompt_template: 'echo run {{n}}', callback_url: receiver.url });
      expect(loop.status).toBe(201);
      const slug = loop.body.loop.slug;
      const first = await d.api<{ run: { id: number } }>('POST', `/loops/${slug}/trigger`, { variables: { n: 'one' } });
      const second = await d.api<{ run: { id: number } }>('POST', `/loops/${slug}/trigger`, { variables: { n: 'two' } });
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/loops/${slug}/runs/999999`);
      await page.getByRole('alert').waitFor();
      await setHash(page, `/loops/${slug}/runs/${second.body.run.id}`);
      await page.getByRole('heading', { name: new RegExp(`^Run ${second.body.run.id} of ${slug}`) }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      await setHash(page, `/loops/${slug}/runs/${first.body.run.id}`);
      await page.getByRole('heading', { name: new RegExp(`^Run ${first.body.run.id} of ${slug}`) }).waitFor();
      await expect.poll(() => page.locator('dl.facts').first().textContent(), { timeout: 30_000 }).toContain('"n":"one"');
      expect(await page.locator('dl.facts').first().textContent()).not.toContain('"n":"two"');

      // The run's callback: its first attempt failed (500), the retry succeeded; both are listed.
      const attempts = page.getByRole('table', { name: 'Callback delivery attempts' }).locator('tbody tr');
      await expect.poll(() => attempts.count(), { timeout: 30_000 }).toBe(2);
      expect(await attempts.allTextContents()).toEqual([expect.stringContaining('200'), expect.stringContaining('500')]);
      const before = await attempts.count();
      await page.getByRole('button', { name: 'Redeliver' }).click();
      await expect.poll(() => attempts.count(), { timeout: 30_000 }).toBeGreaterThan(before);
      expect(await page.locator('tbody tr[data-delivery]').evaluateAll((rows) => new Set(rows.map((r) => r.getAttribute('data-delivery'))).size)).toBeGreaterThanOrEqual(2);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });

    it('counts cancelled runs in the loops list', async () => {
      const d = dashboard();
      const gate = `never-${width}-${Date.now()}`;
      const loop = await d.api<{ loop: { slug: string } }>('POST', '/loops', { name: `Cancelled ${width}`, agent_slug: 'shell', execution_mode: 'direct', prompt_template: waitForTicketLine(gate) });
      const slug = loop.body.loop.slug;
      const run = await d.api<{ run: { id: number } }>('POST', `/loops/${slug}/trigger`, {});
      expect((await d.api('POST', `/loops/${slug}/runs/${run.body.run.id}/cancel`)).status).toBe(200);
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/loops/${slug}`);
      await expect.poll(() => page.locator('dl.facts').first().textContent(), { timeout: 15_000 }).toContain('1 (0 ok, 0 failed, 1 cancelled)');
      if (width > 600) {
        await page.goto(`${d.url}/#/loops`);
        await expect.poll(() => page.locator(`tr[data-loop="${slug}"] [data-testid="run-counts"]`).textContent()).toBe('1 (0 ok, 0 failed, 1 cancelled)');
      }
      await page.context().close();
    });

    it('shows a message’s author, its markdown (safely) and clickable links', async () => {
      const d = dashboard();
      const made = await d.api<{ channel: { id: number } }>('POST', '/channels', { name: `md-${width}-${Date.now()}` });
      await d.api('POST', `/channels/${made.body.channel.id}/messages`, { content: 'Build **passed**, see https://example.com/build/7 and [the log](https://example.com/log).\n<img src=x onerror="window.hacked=1"> [bad](javascript:alert(1))' });
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/channels/${made.body.channel.id}`);
      const message = page.locator('[data-sender="api"]').first();
      await message.waitFor();
      expect(await message.getByTestId('message-author').textContent()).not.toBe('');
      expect(await message.locator('strong').textContent()).toBe('passed');
      expect(await message.getByRole('link', { name: 'https://example.com/build/7' }).getAttribute('href')).toBe('https://example.com/build/7');
      expect(await message.getByRole('link', { name: 'the log' }).getAttribute('href')).toBe('https://example.com/log');
      expect(await message.locator('img').count()).toBe(0);
      expect(await message.locator('a[href^="javascript"]').count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as unknown as { hacked?: number }).hacked)).toBeUndefined();
      await page.context().close();
    });

    it('offers repository, runner, branch and agentfile lines in the loop form, the API’s default mode and the agents of the catalogue', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/loops`);
      await page.getByRole('button', { name: 'New loop' }).click();
      expect(await page.locator('select[name="mode"]').inputValue()).toBe('autopilot');
      const agents = await page.locator('select[name="agent"] option').evaluateAll((o) => o.map((x) => (x as unknown as { value: string }).value));
      expect(agents).toEqual(expect.arrayContaining(['claude-code', 'codex', 'gemini-cli', 'shell']));
      for (const name of ['Repository', 'Runner', 'Branch']) expect(await page.getByLabel(new RegExp(`^${name}`)).count()).toBe(1);
      await page.getByText('Description, callback and agentfile lines').click();
      await page.getByLabel(/Agentfile lines/).waitFor();
      // The runners' names are read once per sign-in, beside the form: wait for them (a read of the
      // options at once saw only "Any runner" in a CI run).
      await page.locator('select[name="runner"] option').nth(1).waitFor({ state: 'attached' });
      const runnerOptions = await page.locator('select[name="runner"] option').allTextContents();
      expect(runnerOptions.length).toBeGreaterThan(1); // "Any runner" and the local runner, by name
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });

    it('marks the data stale while the event stream reconnects', async () => {
      const d = dashboard();
      const page = await d.page(width);
      await page.addInitScript(DROPPABLE_EVENTS);
      await page.goto(d.url + '/');
      await page.getByLabel('Organization').fill('default');
      await page.getByLabel('API key').fill(d.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('.live-live').waitFor({ timeout: 20_000 });
      expect(await page.locator('main[data-stale]').count()).toBe(0);
      await page.evaluate('window.dropEvents()');
      await page.locator('main[data-stale="true"]').waitFor({ timeout: 20_000 });
      expect(await page.getByText('what you see may be out of date').count()).toBe(1);
      await page.evaluate('window.blockEvents = false');
      await page.locator('.live-live').waitFor({ timeout: 30_000 });
      expect(await page.locator('main[data-stale]').count()).toBe(0);
      await page.context().close();
    });
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
