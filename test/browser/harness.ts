/**
 * Browser tests of the dashboard (docs/dashboard.md): a real `drover serve` with its local runner, and a
 * real Chromium (/usr/bin/chromium) driven by playwright-core. No request leaves the server's
 * origin: every page records the URLs it asked for, and `offOrigin()` lists any that went elsewhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestDatabase } from '../helpers/databases.ts';
import type { DatabaseKind } from '../../src/store/db.ts';
import { createProcessTestDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

export const CHROMIUM = process.env.DROVER_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const WIDTHS = [1280, 390] as const;
export const ORG = 'default';
const ADMIN_TOKEN = 'drvadm_browser_tests_admin_token_000000000000';
export const SCREENSHOTS = path.join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

export interface Dashboard {
  readonly url: string;
  readonly key: string;
  readonly server: ServerProcess;
  readonly browser: Browser;
  /** A signed-in page `width` px wide (key: the bootstrap key unless given). */
  signedIn(width: number, key?: string): Promise<Page>;
  /** A fresh page, not signed in. */
  page(width: number): Promise<Page>;
  api<T = Record<string, unknown>>(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: T }>;
  /** An API key of the org with only these scopes. */
  keyWith(scopes: string[]): Promise<string>;
  /** URLs any page asked for outside the server's origin. */
  offOrigin(): string[];
}

/** Starts one server (with its local runner) and one browser for the file; both end after it. */
export function useDashboard(kind: DatabaseKind, extraEnv: Record<string, string> = {}): () => Dashboard {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let dashboard: Dashboard;
  const foreign: string[] = [];
  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({
      dataDir: database.dataDir,
      localRunner: true,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn', DROVER_LOCAL_RUNNER: 'true', DROVER_SWEEP_INTERVAL_MS: '200', ...extraEnv },
    });
    const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await server.localRunnerConnected(30_000);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const origin = new URL(server.url).origin;
    const call = async <T>(method: string, p: string, body?: unknown, auth = key) => {
      const headers: Record<string, string> = p.startsWith('/api/v1/admin') ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { 'x-api-key': auth };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(server.url + (p.startsWith('/api/') ? p : `/api/v1/ext/orgs/${ORG}${p}`), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as T };
    };
    const page = async (width: number) => {
      const context = await browser.newContext({ viewport: { width, height: width > 600 ? 860 : 844 } });
      const p = await context.newPage();
      p.on('request', (request) => {
        if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) foreign.push(request.url());
      });
      return p;
    };
    dashboard = {
      url: server.url,
      key,
      server,
      browser,
      page,
      async signedIn(width, withKey = key) {
        const p = await page(width);
        await p.goto(server.url + '/');
        await p.getByLabel('Organization').fill(ORG);
        await p.getByLabel('API key').fill(withKey);
        await p.getByRole('button', { name: 'Sign in' }).click();
        await p.getByRole('navigation', { name: 'Views' }).waitFor();
        return p;
      },
      api: call,
      async keyWith(scopes) {
        const created = await call<{ key: string }>('POST', `/api/v1/admin/orgs/${ORG}/api-keys`, { name: `browser ${scopes.join(' ')}`, scopes });
        expect(created.status).toBe(201);
        return created.body.key;
      },
      offOrigin: () => [...foreign],
    };
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await database?.cleanup();
  });
  return () => dashboard;
}

/** axe-core in the page: the serious and critical violations, by rule and target. */
export async function axeViolations(page: Page): Promise<string[]> {
  const source = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  await page.evaluate(source);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Takes a screenshot of the page; with UPDATE_SCREENSHOTS=1 (`npm run screenshots`) writes it to
 * docs/screenshots/<name>-<width>.png (the README shows them). A plain test run leaves the
 * committed images alone.
 */
export async function screenshot(page: Page, name: string, width: number): Promise<void> {
  const image = await page.screenshot({ fullPage: false });
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  fs.writeFileSync(path.join(SCREENSHOTS, `${name}-${width}.png`), image);
}


/**
 * A shell line that waits until a ticket labelled `gate` exists, asked with the pod's own token:
 * the test lets a pod go on by creating that ticket, so what the page shows in between is
 * observed, not timed.
 */
export const waitForTicketLine = (gate: string) =>
  `until node -e "fetch(process.env.DROVER_API_URL+'/api/v1/ext/orgs/'+process.env.DROVER_ORG+'/tickets?labels=${gate}',{headers:{'x-api-key':process.env.DROVER_POD_TOKEN}}).then(r=>r.json()).then(b=>process.exit(b.total>0?0:1),()=>process.exit(1))"; do sleep 0.2; done`;
