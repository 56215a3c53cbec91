/**
 * What agents did, in the dashboard (docs/dashboard.md): the pod page's transcript (a tool call with
 * its input, its output folded, a file edit as a diff; the raw output one click away) and facts
 * (ticket, alias, env, a duration that ticks while it runs); the ticket page with its pods live and
 * "Run an agent"; the usage view. Chromium against a real server and its local runner.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { bareRepository } from '../helpers/git-fixture.ts';
import { ORG, WIDTHS, axeViolations, screenshot, useDashboard, waitForTicketLine } from './harness.ts';

const CLAUDE_OUTPUT = fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', 'claude-code-work.out'), 'utf8');
/** A shell script printing what Claude Code printed for a recorded four-turn run. */
const printClaudeOutput = `cat <<'DROVER_FIXTURE_END'\n${CLAUDE_OUTPUT.trimEnd()}\nDROVER_FIXTURE_END`;

describe.each(DATABASES)('dashboard views of what agents did (%s)', (kind) => {
  const dashboard = useDashboard(kind);

  describe.each(WIDTHS)('at %i px', (width) => {
    it("shows a pod's transcript by default: the tool call with its input and folded output, the edit as a diff; raw output one click away; its ticket, alias and env", async () => {
      const d = dashboard();
      const ticket = await d.api<{ ticket: { slug: string } }>('POST', '/tickets', { type: 'task', title: `Transcript ${width}` });
      const layer = [`PROMPT ${JSON.stringify(printClaudeOutput)}`, 'ENV GREETING "hello"'].join('\n');
      const created = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: layer, ticket_slug: ticket.body.ticket.slug, alias: `reader-${width}` });
      expect(created.status).toBe(201);
      const key = created.body.pod.pod_key;
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/pods/${key}`);
      await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('completed');
      // A shell pod's output is plain lines; this one printed Claude Code's stream-json: read it as that.
      await page.getByLabel('Read the output as').selectOption('claude-code');
      const entries = page.getByRole('list', { name: `Transcript of ${key}` });
      const call = entries.locator('[data-kind="tool_call"]', { hasText: '$ cat missing.txt' });
      await call.waitFor({ timeout: 15_000 });
      expect(await call.locator('.tag').textContent()).toBe('Bash');
      const result = entries.locator('[data-kind="tool_result"]', { hasText: 'cat notes.txt' });
      expect(await result.locator('details').getAttribute('open')).toBeNull(); // folded
      expect(await result.locator('pre').isVisible()).toBe(false);
      await result.locator('summary').click();
      await expect.poll(() => result.locator('pre').isVisible()).toBe(true);
      expect(await result.locator('pre').textContent()).toBe('hello');
      // A failed command's output is open, marked as an error.
      const failed = entries.locator('[data-kind="tool_result"].t-error', { hasText: 'cat missing.txt' });
      expect(await failed.locator('pre').textContent()).toContain('No such file or directory');
      expect(await failed.locator('pre').isVisible()).toBe(true);
      const edit = entries.locator('[data-kind="tool_call"]', { hasText: 'Write greeting.txt' });
      expect(await edit.locator('figure.diff ins').count()).toBeGreaterThan(0);
      expect(await entries.locator('[data-kind="text"]').last().textContent()).toContain('Done: wrote greeting.txt');
      // No raw JSON line is shown as text.
      expect(await entries.textContent()).not.toContain('"type":"assistant"');
      await screenshot(page, 'transcript', width);
      expect(await axeViolations(page)).toEqual([]);

      expect(await page.getByRole('link', { name: ticket.body.ticket.slug }).getAttribute('href')).toBe(`#/tickets/${ticket.body.ticket.slug}`);
      expect(await page.locator('dl.facts').first().textContent()).toContain(`reader-${width}`);
      expect(await page.locator('ul.env').textContent()).toContain('GREETING=hello');

      await page.getByRole('button', { name: 'Show raw output' }).click();
      await expect.poll(() => page.getByRole('log', { name: `Output of ${key}` }).textContent(), { timeout: 15_000 }).toContain('"type":"assistant"');
      await page.context().close();
    });

    it("ticks a running pod's duration", async () => {
      const d = dashboard();
      const gate = `tick-${width}-${Date.now()}`;
      const created = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: `PROMPT ${JSON.stringify(`echo started\n${waitForTicketLine(gate)}`)}` });
      const key = created.body.pod.pod_key;
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/pods/${key}`);
      await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('running');
      const duration = page.getByTestId('pod-duration');
      await expect.poll(() => duration.textContent(), { timeout: 10_000 }).toMatch(/\d+ s/);
      const first = await duration.textContent();
      // No event arrives while the pod waits: only the page's own clock can move the figure on.
      await expect.poll(() => duration.textContent(), { timeout: 10_000 }).not.toBe(first);
      await d.api('POST', '/tickets', { type: 'task', title: 'let it end', labels: [gate] });
      await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('completed');
      await page.context().close();
    });

    it('has a page per ticket: its fields, its pods live, and "Run an agent" with the prompt prefilled', async () => {
      const d = dashboard();
      const title = `Ticket page ${width}`;
      const made = await d.api<{ ticket: { slug: string } }>('POST', '/tickets', { type: 'bug', title, description: 'Fix the widget.', labels: ['ui'] });
      const slug = made.body.ticket.slug;
      const page = await d.signedIn(width);
      await page.goto(`${d.url}/#/board`);
      await page.locator('.card', { hasText: title }).getByRole('link').click();
      await page.waitForURL(new RegExp(`#/tickets/${slug}$`));
      await page.getByRole('heading', { name: `${slug}: ${title}` }).waitFor();
      expect(await page.locator('dl.facts').textContent()).toContain('bug');
      await page.locator('.live-live').waitFor({ timeout: 20_000 });
      // A pod started for the ticket elsewhere appears in its pods, live.
      const other = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "echo elsewhere"', ticket_slug: slug });
      const row = page.locator(`tr[data-pod="${other.body.pod.pod_key}"]`);
      await row.waitFor({ timeout: 15_000 });
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('completed');
      await screenshot(page, 'ticket', width);
      expect(await axeViolations(page)).toEqual([]);

      const prompt = page.getByLabel('Prompt', { exact: true });
      expect(await prompt.inputValue()).toBe(`Work on ticket ${slug}: ${title}\n\nFix the widget.`);
      await page.getByLabel('Agent or preset').selectOption('agent:shell');
      await prompt.fill('echo from-the-ticket');
      await page.getByRole('button', { name: 'Run agent' }).click();
      await page.waitForURL(/#\/pods\/.+/);
      const key = decodeURIComponent(page.url().split('#/pods/')[1]);
      const pod = await d.api<{ pod: { ticket_slug: string | null; agent_slug: string } }>('GET', `/pods/${key}`);
      expect(pod.body.pod).toMatchObject({ ticket_slug: slug, agent_slug: 'shell' });
      await expect.poll(() => page.getByRole('list', { name: `Transcript of ${key}` }).textContent(), { timeout: 30_000 }).toContain('from-the-ticket');
      await page.context().close();
    });

    it('shows on the ticket page a pod started from it, with its delivery', async () => {
      const d = dashboard();
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-views-'));
      try {
        const repo = bareRepository(scratch, `shop-${width}`, { 'README.md': 'shop\n' });
        const made = await d.api<{ repository: { id: number } }>('POST', `/api/v1/admin/orgs/${ORG}/repositories`, { name: `shop-${width}`, full_name: `acme/shop-${width}`, provider: 'git', url: repo.bare, default_branch: 'main', token: 'unused-for-a-path' });
        expect(made.status).toBe(201);
        const ticket = await d.api<{ ticket: { slug: string } }>('POST', '/tickets', { type: 'task', title: `Deliver ${width}`, repository_id: made.body.repository.id });
        const slug = ticket.body.ticket.slug;
        const page = await d.signedIn(width);
        await page.goto(`${d.url}/#/tickets/${slug}`);
        await page.getByText(`Repository: shop-${width}`).waitFor();
        await page.getByLabel('Agent or preset').selectOption('agent:shell');
        await page.getByLabel('Prompt', { exact: true }).fill('echo delivered > result.txt');
        await page.getByRole('button', { name: 'Run agent' }).click();
        await page.waitForURL(/#\/pods\/.+/);
        const key = decodeURIComponent(page.url().split('#/pods/')[1]);
        await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 60_000 }).toContain('completed');
        await expect.poll(() => page.locator('[data-delivery]').first().getAttribute('data-delivery'), { timeout: 30_000 }).toBe('pushed');
        await page.getByRole('link', { name: slug }).click();
        const row = page.locator(`tr[data-pod="${key}"]`);
        await row.waitFor({ timeout: 15_000 });
        expect(await row.locator('[data-delivery]').getAttribute('data-delivery')).toBe('pushed');
        expect(await row.textContent()).toContain(`drover/${key}`);
        expect(await axeViolations(page)).toEqual([]);
        await page.context().close();
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    });

    it('shows usage per day, agent, loop and person', async () => {
      const d = dashboard();
      const page = await d.signedIn(width);
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      const usage = await d.api<{ total?: { cost_usd: number | null; pods: number } }>('GET', '/usage?group_by=agent');
      if (usage.status === 404) {
        // A server without GET /usage: the view says so instead of failing.
        await page.getByText('This server does not report usage yet').waitFor();
      } else {
        expect(usage.status).toBe(200);
        await page.getByLabel('Group by').selectOption('agent');
        const cost = usage.body.total!.cost_usd;
        // The view shows what GET /usage totals (a dash while no pod of the period has a cost).
        const shown = cost === null ? '—' : `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
        await expect.poll(() => page.getByTestId('usage-total').textContent(), { timeout: 10_000 }).toContain(`Total: ${shown} over ${usage.body.total!.pods} pods`);
      }
      expect(await page.getByRole('alert').count()).toBe(0);
      await screenshot(page, 'usage', width);
      expect(await axeViolations(page)).toEqual([]);
      await page.context().close();
    });
  });

  it('reads a long transcript from its end: the newest 200 entries first, earlier ones on demand', async () => {
    const d = dashboard();
    const created = await d.api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: `PROMPT ${JSON.stringify('seq 1 1300 | sed "s/^/line /"')}` });
    const key = created.body.pod.pod_key;
    const page = await d.signedIn(1280);
    const asked: string[] = [];
    page.on('request', (request) => void (request.url().includes('/transcript') && asked.push(new URL(request.url()).search)));
    await page.goto(`${d.url}/#/pods/${key}`);
    await expect.poll(() => page.getByTestId('pod-status').textContent(), { timeout: 30_000 }).toContain('completed');
    const entries = page.getByRole('list', { name: `Transcript of ${key}` }).locator('li');
    const transcript = page.locator('.transcript[data-entries="1300"]');
    await transcript.waitFor({ timeout: 15_000 });
    await expect.poll(() => entries.count()).toBe(200);
    expect(await entries.first().textContent()).toBe('line 1101');
    expect(await entries.last().textContent()).toBe('line 1300');
    expect(asked.every((q) => q.includes('newest=true') && q.includes('limit=200')), asked.join(' ')).toBe(true);
    await page.getByRole('button', { name: 'Show earlier entries (1,100 more)' }).click();
    await expect.poll(() => entries.count()).toBe(1200);
    expect(await entries.first().textContent()).toBe('line 101');
    await page.getByRole('button', { name: 'Show earlier entries (100 more)' }).click();
    await expect.poll(() => entries.count()).toBe(1300);
    expect(await entries.first().textContent()).toBe('line 1');
    expect(await page.getByRole('button', { name: /Show earlier entries/ }).count()).toBe(0);
    expect(await page.locator('.transcript').textContent()).toContain('1,300 entries');
    await page.context().close();
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
