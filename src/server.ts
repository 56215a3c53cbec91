import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { ServerConfig } from './config.ts';
import { bootstrapIfEmpty } from './domain/admin/bootstrap.ts';
import { randomBase62 } from './domain/auth/keys.ts';
import type { DomainContext } from './domain/context.ts';
import { Housekeeping } from './scheduler/housekeeping.ts';
import { openStore } from './store/db.ts';
import { migrateToLatest } from './store/migrate.ts';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** The admin token: DROVER_ADMIN_TOKEN, else `<data dir>/admin-token`, generated on first start. */
function resolveAdminToken(config: ServerConfig, announce: (line: string) => void): string {
  if (config.adminToken) return config.adminToken;
  const file = path.join(config.dataDir, 'admin-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const token = 'drvadm_' + randomBase62(40);
  fs.writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  announce(`Generated the admin token (shown once; also in ${file}): ${token}`);
  return token;
}

/** `drover serve`: open the store, migrate, bootstrap, listen; stop cleanly on SIGTERM/SIGINT. */
export async function startServer(config: ServerConfig, options: { handleSignals?: boolean } = {}): Promise<RunningServer> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const logger = pino({ level: config.logLevel });
  const announce = (line: string) => process.stdout.write(line + '\n');

  const store = openStore({ databaseUrl: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'drover.sqlite') });
  await migrateToLatest(store);
  const ctx: DomainContext = { store, now: Date.now };
  const adminToken = resolveAdminToken(config, announce);

  const bootstrap = await bootstrapIfEmpty(ctx);
  if (bootstrap) {
    const file = path.join(config.dataDir, 'bootstrap-api-key');
    fs.writeFileSync(file, bootstrap.key + '\n', { mode: 0o600 });
    announce(`Created organization "${bootstrap.org}" and an API key with every scope (shown once; also in ${file}): ${bootstrap.key}`);
  }

  const app = await buildApp({ store, adminToken, rateLimitPerMinute: config.rateLimitPerMinute, logger });
  const housekeeping = new Housekeeping(ctx, app.log);
  housekeeping.start();
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  announce(`Drover listening on ${url} (${store.kind === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'})`);

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      housekeeping.stop();
      await app.close(); // stops accepting, lets in-flight requests finish
      await store.close();
    })());

  if (options.handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      app.log.info({ signal }, 'shutting down');
      close().then(
        () => process.exit(0),
        (error) => {
          app.log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return { app, url, close };
}
