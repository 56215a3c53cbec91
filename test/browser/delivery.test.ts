/**
 * The delivery of a run's work with its merge request in the dashboard (docs/dashboard.md): a loop
 * run with `CONFIG deliver = merge_request` on a GitHub-shaped repository (smart HTTP on loopback
 * requiring the token, and a stand-in of the provider's API). The run page and its pod's page show
 * the delivery: its branch, diff stat, commits and a link to the merge request.
 */
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { bareRepository } from '../helpers/git-fixture.ts';
import { gitHttpServer } from '../helpers/git-http.ts';
import { listen, providerStandIn } from '../helpers/provider-stand-in.ts';
import { ORG, axeViolations, useDashboard } from './harness.ts';

const TOKEN = 'ghp_BrowserDeliveryToken_0042';

interface Delivery {
  status: string;
  branch: string;
  head_commit: string;
  files_changed: number;
  merge_request: { id: number; url: string; state: string } | null;
  error: string | null;
}

describe.each(DATABASES)('dashboard: a delivery with its merge request (%s)', (kind) => {
  let scratch: string;
  const servers: http.Server[] = [];
  const standIn = providerStandIn(TOKEN);
  let gitBase = '';
  let apiBase = '';
  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-browser-delivery-'));
    const served = path.join(scratch, 'served');
    fs.mkdirSync(served);
    bareRepository(served, 'shop', { 'README.md': 'shop\n' });
    const git = gitHttpServer({ root: () => served, token: TOKEN });
    servers.push(git, standIn.server);
    gitBase = await listen(git);
    apiBase = await listen(standIn.server);
  });
  const dashboard = useDashboard(kind);
  afterAll(() => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  /** The page's Delivery panel shows `delivery` with a link to its merge request. */
  async function expectDeliveryShown(page: Page, delivery: Delivery): Promise<void> {
    const panel = page.getByRole('region', { name: 'Delivery' });
    await expect.poll(() => panel.locator('[data-delivery]').getAttribute('data-delivery'), { timeout: 15_000 }).toBe('pushed');
    expect(await panel.locator('code').first().textContent()).toBe(delivery.branch);
    expect(await panel.textContent()).toContain('1 files, +1 −0');
    expect(await panel.locator('ul.commits li').first().textContent()).toContain(delivery.head_commit.slice(0, 10));
    const link = panel.getByRole('link', { name: `!${delivery.merge_request!.id} (opened)` });
    expect(await link.getAttribute('href')).toBe(delivery.merge_request!.url);
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
  }

  it('the run page and its pod’s page show the branch, the diff stat and a link to the merge request', async () => {
    const d = dashboard();
    const repository = await d.api<{ repository: { id: number } }>('POST', `/api/v1/admin/orgs/${ORG}/repositories`, {
      name: 'shop',
      full_name: 'acme/shop',
      provider: 'github',
      url: `${gitBase}/shop.git`,
      default_branch: 'main',
      token: TOKEN,
      api_base_url: apiBase,
    });
    expect(repository.status).toBe(201);
    const loop = await d.api<{ loop: { slug: string } }>('POST', '/loops', {
      name: 'Price widgets',
      agent_slug: 'shell',
      execution_mode: 'direct',
      prompt_template: 'echo priced > priced.txt',
      repository_id: repository.body.repository.id,
      agentfile_layer: 'CONFIG deliver = merge_request',
    });
    expect(loop.status).toBe(201);
    const slug = loop.body.loop.slug;
    const triggered = await d.api<{ run: { id: number } }>('POST', `/loops/${slug}/trigger`);
    expect(triggered.status).toBe(201);
    const runId = triggered.body.run.id;
    let run: { pod_key: string; delivery: Delivery | null } = { pod_key: '', delivery: null };
    await expect
      .poll(async () => ((run = (await d.api<{ run: typeof run }>('GET', `/loops/${slug}/runs/${runId}`)).body.run), run.delivery?.merge_request ?? run.delivery?.error ?? null), { timeout: 90_000 })
      .toMatchObject({ state: 'opened' });
    const delivery = run.delivery!;
    expect(delivery).toMatchObject({ status: 'pushed', branch: expect.stringMatching(/^drover\//), error: null, files_changed: 1 });
    expect(standIn.stored.github).toHaveLength(1);
    expect(delivery.merge_request!.url).toBe(`http://mr.test/github/${standIn.stored.github[0].id}`);

    const page = await d.signedIn(1280);
    await page.goto(`${d.url}/#/loops/${slug}/runs/${runId}`);
    await expectDeliveryShown(page, delivery);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('link', { name: run.pod_key }).click();
    await expectDeliveryShown(page, delivery);
    // The pod's facts carry the same one-line summary, the link included.
    const fact = page.locator('dl.facts').first();
    expect(await fact.getByRole('link', { name: `!${delivery.merge_request!.id} (opened)` }).getAttribute('href')).toBe(delivery.merge_request!.url);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('made no request to any other host', () => {
    expect(dashboard().offOrigin()).toEqual([]);
  });
});
