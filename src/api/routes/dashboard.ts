import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { AppError } from '../../errors.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acceptsGzip } from '../content-encoding.ts';

/** The built dashboard (bin/build-dashboard.mjs): its script and stylesheet. */
export interface DashboardAssets {
  js: Buffer;
  css: Buffer;
}

/**
 * The page's Content-Security-Policy: scripts, styles and connections from this server only, no
 * inline script or style, no frames, no plugins, no form posts elsewhere. Preact sets styles
 * through the CSSOM, which `style-src 'self'` allows.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer, type: string): Asset {
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, gzip: zlib.gzipSync(body, { level: 9 }), type, etag };
}

/**
 * The tab's icon, inline (the CSP allows data: images): without one every load asks for
 * /favicon.ico, a 404 in the console.
 */
const FAVICON = encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#111827"/><path d="M9 8h7a8 8 0 0 1 0 16H9z" fill="none" stroke="#60a5fa" stroke-width="3.5"/></svg>',
);

function page(js: Asset, css: Asset): Buffer {
  const v = (a: Asset) => encodeURIComponent(a.etag.slice(1, 9));
  return Buffer.from(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Drover</title>
<link rel="icon" href="data:image/svg+xml,${FAVICON}">
<link rel="stylesheet" href="/assets/dashboard.css?v=${v(css)}">
<script defer src="/assets/dashboard.js?v=${v(js)}"></script>
</head>
<body>
<div id="app"><noscript>The Drover dashboard needs JavaScript.</noscript></div>
</body>
</html>
`);
}

function send(request: FastifyRequest, reply: FastifyReply, item: Asset, cache: string) {
  reply
    .header('content-type', item.type)
    .header('cache-control', cache)
    .header('etag', item.etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', DASHBOARD_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
  if (request.headers['if-none-match'] === item.etag) return reply.code(304).send();
  if (acceptsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(item.gzip);
  return reply.send(item.body);
}

/**
 * The web dashboard (docs/dashboard.md) at `/`: one HTML page and its two assets, held in memory and
 * gzipped once. Hidden from the OpenAPI document: these are not API operations. Views are
 * addressed in the URL's fragment (`/#/pods/KEY`), so `/` is the only page.
 */
export function dashboardRoutes(assets: DashboardAssets) {
  const js = asset(assets.js, 'text/javascript; charset=utf-8');
  const css = asset(assets.css, 'text/css; charset=utf-8');
  const html = asset(page(js, css), 'text/html; charset=utf-8');
  const files: Record<string, Asset> = { 'dashboard.js': js, 'dashboard.css': css };
  return async (app: FastifyInstance) => {
    app.get('/', { schema: { hide: true } }, (request, reply) => send(request, reply, html, 'no-cache'));
    app.get<{ Params: { name: string } }>('/assets/:name', { schema: { hide: true } }, (request, reply) => {
      const item = files[request.params.name];
      if (!item) throw new AppError('NOT_FOUND', `no dashboard asset ${request.params.name}`);
      return send(request, reply, item, 'no-cache');
    });
  };
}
