/**
 * Loops and channels in the dashboard, in Chromium against a real server and its local runner: a
 * loop created from the form and triggered shows its run go running → completed live (the run's
 * pod waits for the test's go-ahead, so "running" is observed, not timed); a message posted in a
 * channel from the page, and one posted by a pod with its own token, appear live with their
 * sender types.
 */
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { WIDTHS, axeViolations, screenshot, useDashboard, waitForTicketLine } from './harness.ts';

describe.each(DATABASES)('dashboard loops and channels (%s)', (kind) => {
  const dashboard = useDashboard(kind);

  describe.each(WIDTHS)('at %i px', (width) => {
    it('creates a loop, triggers it and shows the run go running → completed live', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.goto(d.url + '/#/loops');
      await page.getByRole('button', { name: 'New loop' }).click();
      const gate = `loop-gate-${width}-${Date.now()}`;
      await page.getByLabel('Name', { exact: true }).fill(`Nightly ${width}`);
      await page.locator('select[name="agent"]').selectOption('shell');
      await page.locator('select[name="mode"]').selectOption('direct');
      await page.getByLabel(/Prompt template/).fill(`echo hello {{who}}\n${waitForTicketLine(gate)}\necho done`);
      await page.getByLabel('Variables (JSON object)').fill('{"who": "world"}');
      await page.getByLabel('Concurrency policy').selectOption('queue');
      await page.getByRole('button', { name: 'Create loop' }).click();
      await page.waitForURL(/#\/loops\/[^/]+$/);
      const slug = decodeURIComponent(page.url().split('#/loops/')[1]);
      const loop = await d.api<{ loop: { concurrency_policy: string; prompt_variables: Record<string, string> } }>('GET', `/loops/${slug}`);
      expect(loop.body.loop).toMatchObject({ concurrency_policy: 'queue', prompt_variables: { who: 'world' } });

      await page.getByLabel('Variables for this run (JSON object)').fill('{"who": "browser"}');
      await page.getByRole('button', { name: 'Trigger' }).click();
      const row = page.locator('tr[data-run]').first();
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('running');
      await d.api('POST', '/tickets', { type: 'task', title: 'let the run finish', labels: [gate] });
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('completed');
      await screenshot(page, 'loop', width);

      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel(/Cron expression/).fill('0 9 * * 1-5');
      await page.getByLabel('Time zone').fill('Europe/Paris');
      await page.getByRole('button', { name: 'Save loop' }).click();
      await expect.poll(async () => (await d.api<{ loop: { cron_expression: string | null; cron_timezone: string } }>('GET', `/loops/${slug}`)).body.loop).toMatchObject({ cron_expression: '0 9 * * 1-5', cron_timezone: 'Europe/Paris' });
      await page.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(() => page.getByTestId('loop-status').textContent()).toContain('disabled');
      expect((await d.api<{ loop: { status: string } }>('GET', `/loops/${slug}`)).body.loop.status).toBe('disabled');
      await page.getByRole('button', { name: 'Enable' }).click();
      await expect.poll(() => page.getByTestId('loop-status').textContent()).toContain('enabled');
      expect(await axeViolations(page)).toEqual([]);

      await row.getByRole('link').click();
      await page.getByRole('button', { name: 'Show raw output' }).click();
      await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('hello browser');
      expect(await page.getByTestId('callback-status').textContent()).toContain('none');
      await screenshot(page, 'run', width);
      expect(await axeViolations(page)).toEqual([]);

      await page.goto(d.url + '/#/loops');
      await page.locator(`tr[data-loop="${slug}"] svg`).waitFor();
      await screenshot(page, 'loops', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });

    it('posts in a channel and shows a message a pod posts with its token, live', async () => {
      const d = dashboard();
      const made = await d.api<{ channel: { id: number } }>('POST', '/channels', { name: `chat-${width}-${Date.now()}`, document: '# Plan\nShip the dashboard.' });
      const channelId = made.body.channel.id;
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/channels/${channelId}`);
      await page.getByText('Ship the dashboard.').waitFor();
      await page.locator('.live-live').waitFor({ timeout: 20_000 });
      await page.getByLabel('Message', { exact: true }).fill('hello from the browser');
      await page.getByRole('button', { name: 'Post' }).click();
      await page.locator('[data-sender="api"]', { hasText: 'hello from the browser' }).waitFor();
      const script = `node -e "fetch(process.env.DROVER_API_URL+'/api/v1/ext/orgs/'+process.env.DROVER_ORG+'/channels/${channelId}/messages',{method:'POST',headers:{'x-api-key':process.env.DROVER_POD_TOKEN,'content-type':'application/json'},body:JSON.stringify({content:'hello from a pod'})}).then(r=>process.exit(r.status===201?0:1))"`;
      const pod = await d.api('POST', '/pods', { agent_slug: 'shell', agentfile_layer: `PROMPT ${JSON.stringify(script)}` });
      expect(pod.status).toBe(201);
      await page.locator('[data-sender="agent"]', { hasText: 'hello from a pod' }).waitFor({ timeout: 30_000 });
      await screenshot(page, 'channel', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(d.url + '/#/channels');
      await page.locator(`tr[data-channel="${channelId}"]`).waitFor();
      await screenshot(page, 'channels', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
