/**
 * Pods in the dashboard, in Chromium against a real server and its local runner: a `shell` pod
 * started from the form streams its output line by line into the pod page (the second line is
 * held back by the pod until the test allows it, so "line by line" is observed, not timed), and
 * a running pod is terminated from its page. Runners show the local runner with its agents.
 */
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { WIDTHS, axeViolations, screenshot, useDashboard, waitForTicketLine } from './harness.ts';

/** Prints line-1, waits until a ticket labelled `gate` exists, prints line-2. */
const gated = (gate: string) => ['echo line-1', waitForTicketLine(gate), 'echo line-2'].join('\n');

describe.each(DATABASES)('dashboard pods and runners (%s)', (kind) => {
  const dashboard = useDashboard(kind);

  describe.each(WIDTHS)('at %i px', (width) => {
    it('starts a shell pod from the form and shows its output line by line', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Pods' }).click();
      await page.getByRole('button', { name: 'New pod' }).click();
      await expect.poll(() => page.locator('select[name="agent"]').inputValue(), { timeout: 10_000 }).toBe('shell');
      const gate = `gate-${width}-${Date.now()}`;
      await page.getByLabel('Prompt').fill(gated(gate));
      await page.getByRole('button', { name: 'Start pod' }).click();
      await page.waitForURL(/#\/pods\/.+/);
      const key = decodeURIComponent(page.url().split('#/pods/')[1]);
      await page.getByRole('button', { name: 'Show raw output' }).click();
      const terminal = page.getByRole('log', { name: `Output of ${key}` });
      await expect.poll(() => terminal.textContent(), { timeout: 30_000 }).toContain('line-1');
      expect(await terminal.textContent()).not.toContain('line-2');
      await d.api('POST', '/tickets', { type: 'task', title: 'let line 2 through', labels: [gate] });
      await expect.poll(() => terminal.textContent(), { timeout: 30_000 }).toContain('line-2');
      await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('completed');
      const pod = await d.api<{ pod: { status: string; agent_slug: string } }>('GET', `/pods/${key}`);
      expect(pod.body.pod).toMatchObject({ status: 'completed', agent_slug: 'shell' });
      await screenshot(page, 'pod', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(d.url + '/#/pods');
      await page.locator(`tr[data-pod="${key}"]`).waitFor();
      await screenshot(page, 'pods', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });

    it('terminates a running pod from its page', async () => {
      const d = dashboard();
      const created = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "echo started; sleep 300"' });
      expect(created.status).toBe(201);
      const key = created.body.pod.pod_key;
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/pods/${key}`);
      await page.getByRole('button', { name: 'Show raw output' }).click();
      await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('started');
      await page.getByRole('button', { name: 'Terminate' }).click();
      await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('terminated');
      expect((await d.api<{ pod: { status: string } }>('GET', `/pods/${key}`)).body.pod.status).toBe('terminated');
      await page.context().close();
    });

    it('lists the local runner with its sandbox, agents and load', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.goto(d.url + '/#/runners');
      const row = page.locator('tr[data-runner]').first();
      await row.waitFor();
      expect(await row.textContent()).toMatch(/online/);
      expect(await row.textContent()).toMatch(/bwrap|none/);
      await screenshot(page, 'runners', width);
      expect(await axeViolations(page)).toEqual([]);
      await row.getByRole('link').click();
      await page.getByRole('heading', { name: 'Pods on this runner' }).waitFor();
      await page.locator('.panel .tag', { hasText: 'shell' }).first().waitFor();
      await page.context().close();
    });
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
