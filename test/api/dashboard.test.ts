/**
 * The dashboard's routes (docs/dashboard.md) in the app: `/` and its two assets with a strict CSP,
 * gzip when accepted, ETags; none of it without assets (DROVER_DASHBOARD=false); and the order
 * of checks the dashboard's scope probe relies on (403 with required_scopes before 400). The
 * assets are the real build of web/ (bin/build-dashboard.mjs), whose script must stay within the
 * 150 KB gzipped first-load budget.
 */
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardAssets } from '../../src/api/routes/dashboard.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { REPO_ROOT } from '../helpers/server-process.ts';

let assets: DashboardAssets;
beforeAll(async () => {
  const builder = (await import(pathToFileURL(path.join(REPO_ROOT, 'bin', 'build-dashboard.mjs')).href)) as { dashboardAssets(): Promise<DashboardAssets> };
  assets = await builder.dashboardAssets();
}, 60_000);

describe('the dashboard build', () => {
  it('is one script within the 150 KB gzipped budget, and a stylesheet', () => {
    expect(assets.js.length).toBeGreaterThan(1000);
    expect(zlib.gzipSync(assets.js).length).toBeLessThanOrEqual(150 * 1024);
    expect(assets.css.toString()).toContain('.board');
    // Nothing in the bundle names another host to load from.
    expect(assets.js.toString()).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
  });
});

describe.each(DATABASES)('dashboard routes (%s)', (kind) => {
  let t: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { dashboard: assets });
    off = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
  });

  it('serves the page with a strict CSP', async () => {
    const page = await t.request({ method: 'GET', url: '/', key: null });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(directive);
    expect(csp).not.toMatch(/unsafe|\*/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).toMatch(/<script defer src="\/assets\/dashboard\.js\?v=[^"]+"><\/script>/);
    expect(page.body).not.toMatch(/<script>|style=/);
  });

  it('sends the script gzipped to clients that accept it, and as is to others', async () => {
    const gz = await t.request({ method: 'GET', url: '/assets/dashboard.js?v=1', key: null, headers: { 'accept-encoding': 'gzip, br' } });
    expect(gz.statusCode).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).equals(assets.js)).toBe(true);
    const plain = await t.request({ method: 'GET', url: '/assets/dashboard.js', key: null, headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(assets.js)).toBe(true);
    expect(plain.headers['content-type']).toMatch(/^text\/javascript/);
    const again = await t.request({ method: 'GET', url: '/assets/dashboard.css', key: null, headers: { 'if-none-match': String((await t.request({ method: 'GET', url: '/assets/dashboard.css', key: null })).headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('answers an unknown asset with the API error body', async () => {
    const missing = await t.request({ method: 'GET', url: '/assets/other.js', key: null });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('has no dashboard when the server has none (DROVER_DASHBOARD=false)', async () => {
    for (const url of ['/', '/assets/dashboard.js']) {
      const response = await off.request({ method: 'GET', url, key: null });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('checks the scope before the body, which the sign-in relies on to learn the scopes', async () => {
    const reader = await t.issueKey(['tickets:read']);
    const refused = await t.request({ method: 'POST', url: t.path('/tickets'), key: reader.key, payload: {} });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scopes: ['tickets:write'] });
    const writer = await t.issueKey(['tickets:write']);
    const invalid = await t.request({ method: 'POST', url: t.path('/tickets'), key: writer.key, payload: {} });
    expect(invalid.statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: t.path('/tickets'), key: writer.key })).statusCode).toBe(200);
  });
});
