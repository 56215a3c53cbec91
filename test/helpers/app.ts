import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/serve/build-app.ts';
import type { DashboardAssets } from '../../src/api/routes/dashboard.ts';
import * as admin from '../../src/domain/admin/service.ts';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import type { StreamCaps } from '../../src/domain/auth/credential-streams.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import type { Quotas } from '../../src/domain/quotas/model.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import type { DatabaseKind, Store } from '../../src/store/db.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { createTestStore, type TestDatabase } from './databases.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  kind: DatabaseKind;
  app: FastifyInstance;
  store: Store;
  /** The database under `store`: `database.open()` gives another store on it (a second replica). */
  database: TestDatabase;
  ctx: DomainContext;
  /** The app's secret box (a random key per test app), to read encrypted columns. */
  secrets: SecretBox;
  org: OrgRow;
  /** A key holding every scope in `org`. */
  key: string;
  /** Issues another key in `org` (or another org). */
  issueKey(scopes: readonly Scope[], options?: { org?: OrgRow; expiresAt?: string }): Promise<{ id: number; key: string }>;
  createOrg(slug: string, ticketPrefix?: string): Promise<OrgRow>;
  /** Injects a request carrying `key` (X-API-Key) unless headers say otherwise. */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  /** `/api/v1/ext/orgs/<org slug>` + path. */
  path(path: string, org?: string): string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  rateLimitPerMinute?: number;
  /** Failed authentications per address per minute (default 0: off). */
  authFailuresPerMinute?: number;
  /** Runner registrations per address per minute (default 0: off). */
  registerPerMinute?: number;
  /** PostgreSQL: how often rate-limit counts are shared. */
  rateLimitFlushMs?: number;
  /** Headers and body must arrive within this (default 30 s). */
  requestTimeoutMs?: number;

  now?: () => number;
  /** Budget of Git provider calls (default: the app's default, 10 s). */
  providerTimeoutMs?: number;
  logger?: FastifyBaseLogger;
  /** Server-wide quota defaults (default: the built-in ones). */
  quotas?: Quotas;
  /** The dashboard's assets, served at `/` (default: no dashboard). */
  dashboard?: DashboardAssets;
  /** Concurrent streams per key and per organization (default: the app's, 20 and 500). */
  streamCaps?: StreamCaps;
  /** Callback URLs may name private addresses (DROVER_WEBHOOK_ALLOW_PRIVATE). */
  webhookAllowPrivate?: boolean;
}

export async function startTestApp(kind: DatabaseKind, options: TestAppOptions = {}): Promise<TestApp> {
  const { store, database, cleanup } = await createTestStore(kind);
  const now = options.now ?? Date.now;
  const secrets = new SecretBox(crypto.randomBytes(32));
  const { providerTimeoutMs, logger, quotas } = options;
  const app = await buildApp({
    store,
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 0,
    authFailuresPerMinute: options.authFailuresPerMinute ?? 0,
    registerPerMinute: options.registerPerMinute ?? 0,
    rateLimitFlushMs: options.rateLimitFlushMs,
    requestTimeoutMs: options.requestTimeoutMs,
    now,
    secrets,
    providerTimeoutMs,
    logger,
    quotas,
    dashboard: options.dashboard,
    streamCaps: options.streamCaps,
    webhookAllowPrivate: options.webhookAllowPrivate,
  });
  // The app's own context: domain calls made by a test (revoking a key, say) reach the app as
  // they would from a route.
  const ctx: DomainContext = app.drover.ctx;
  const org = await admin.createOrg(ctx, { slug: 'acme', name: 'Acme' });
  const issueKey: TestApp['issueKey'] = async (scopes, opts = {}) => {
    const { apiKey, key } = await admin.issueApiKey(ctx, store.db, (opts.org ?? org).id, {
      name: 'test',
      scopes,
      expires_at: opts.expiresAt,
    });
    return { id: apiKey.id, key };
  };
  const { key } = await issueKey(SCOPES);
  return {
    kind,
    app,
    store,
    database,
    ctx,
    secrets,
    org,
    key,
    issueKey,
    createOrg: (slug, ticketPrefix) => admin.createOrg(ctx, { slug, name: slug, ticket_prefix: ticketPrefix }),
    request: ({ key: requestKey, headers, ...rest }) => {
      const auth = requestKey === null ? {} : { 'x-api-key': requestKey ?? key };
      return app.inject({ ...rest, headers: { ...auth, ...headers } });
    },
    path: (p, orgSlug = org.slug) => `/api/v1/ext/orgs/${orgSlug}${p}`,
    async close() {
      await app.close();
      await cleanup();
    },
  };
}
