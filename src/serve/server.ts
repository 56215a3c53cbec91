import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DashboardAssets } from '../api/routes/dashboard.ts';
import { packageFile } from '../paths.ts';
import { createApp } from '../app.ts';
import { Runtime } from './runtime.ts';
import { prepareDataDir } from '../data-dir.ts';
import type { Logger } from 'pino';
import { createLogger } from '../logger.ts';
import type { ServerConfig } from '../config.ts';
import { bootstrapIfEmpty } from '../domain/admin/bootstrap.ts';
import { randomBase62 } from '../domain/auth/keys.ts';
import { SecretBox, resolveSecretKey } from '../domain/secrets.ts';
import { networkCause } from '../client/network.ts';
import { openStore, type Store } from '../store/db.ts';
import { LocalRunner } from './local-runner.ts';
import { migrateToLatest } from '../store/migrate.ts';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** The dashboard's assets, built from web/ by bin/build-dashboard.mjs (kept in .build while the sources are unchanged). */
async function loadDashboardAssets(): Promise<DashboardAssets> {
  const builder = (await import(pathToFileURL(packageFile('bin/build-dashboard.mjs')).href)) as { dashboardAssets(): Promise<DashboardAssets> };
  return builder.dashboardAssets();
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

/**
 * DROVER_TEST_CRON_CLOCK_FILE: "now" for cron slots is the epoch-milliseconds number in this file,
 * read on every tick, so a test can drive several server processes through cron slots together and
 * faster than real time. A file that does not hold a number fails the tick (logged), never falls
 * back to the real clock.
 */
function testClock(file: string): () => number {
  const read = () => {
    const value = Number(fs.readFileSync(file, 'utf8').trim());
    if (!Number.isFinite(value) || value <= 0) throw new Error(`DROVER_TEST_CRON_CLOCK_FILE ${file} does not hold a time in epoch milliseconds`);
    return value;
  };
  read(); // a missing or malformed file stops the start
  return read;
}

/** The store of `config`, migrated; a database that cannot be reached is named (without its password). */
async function openMigratedStore(config: ServerConfig): Promise<Store> {
  const store = openStore({ databaseUrl: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'drover.sqlite') });
  try {
    await migrateToLatest(store);
  } catch (error) {
    await store.close().catch(() => undefined);
    if (config.databaseUrl && (error as { code?: string }).code?.startsWith('E')) {
      const where = new URL(config.databaseUrl);
      if (where.password) where.password = '***';
      throw new Error(`cannot reach the database at ${where.toString()}: ${networkCause(error)}`, { cause: error });
    }
    throw error;
  }
  return store;
}

/** The runtime (domain context and background loops) of `drover serve`, with its secret key. */
function serverRuntime(config: ServerConfig, store: Store, logger: Logger, announce: (line: string) => void): Runtime {
  const secretKey = resolveSecretKey(config.secretKey, config.dataDir);
  if (secretKey.generated) {
    announce(
      `Generated the key that encrypts stored repository tokens in ${secretKey.generated}; back it up, ` +
        'and give every replica the same key through DROVER_SECRET_KEY',
    );
  }
  return new Runtime({
    store,
    secrets: new SecretBox(secretKey.key),
    providerTimeoutMs: config.providerTimeoutMs,
    replicas: true,
    publicUrl: config.publicUrl,
    defaultAgent: config.defaultAgent,
    webhookAllowPrivate: config.webhookAllowPrivate,
    quotas: config.quotas,
    streamCaps: config.streamCaps,
    logger,
    loops: {
      liveness: { intervalMs: config.sweepIntervalMs, orphanGraceMs: config.orphanGraceMs, orphanFailMs: config.orphanFailMs, queueTimeoutMs: config.podQueueTimeoutMs },
      cron: { intervalMs: config.cronTickMs, catchupMs: config.cronCatchupMs, prepareAheadMs: config.cronPrepareAheadMs, now: config.testCronClockFile ? testClock(config.testCronClockFile) : undefined },
      eventRetentionMs: config.eventRetentionMs,
      webhookAllowPrivate: config.webhookAllowPrivate,
    },
  });
}

/** On an empty database: the first organization and its all-scopes key, written to the data dir. */
async function bootstrap(runtime: Runtime, config: ServerConfig, announce: (line: string) => void): Promise<void> {
  const created = await bootstrapIfEmpty(runtime.ctx);
  if (!created) return;
  const file = path.join(config.dataDir, 'bootstrap-api-key');
  fs.writeFileSync(file, created.key + '\n', { mode: 0o600 });
  announce(`Created organization "${created.org}" and an API key with every scope (shown once; also in ${file}): ${created.key}`);
}

/**
 * The HTTP app. A dashboard that cannot be built (sources missing from the package, say) must not
 * keep the API from starting: the server says why and serves the API alone.
 */
async function serverApp(runtime: Runtime, config: ServerConfig, logger: Logger, adminToken: string): Promise<FastifyInstance> {
  const dashboard = config.dashboard
    ? await loadDashboardAssets().catch((error: unknown) => {
        logger.warn({ err: error }, 'the web dashboard could not be built and is not served');
        return null;
      })
    : null;
  const app = await createApp(runtime, {
    adminToken,
    rateLimitPerMinute: config.rateLimitPerMinute,
    authFailuresPerMinute: config.authFailuresPerMinute,
    registerPerMinute: config.registerPerMinute,
    requestTimeoutMs: config.requestTimeoutMs,
    trustProxy: config.trustProxy,
    processMetrics: true,
    logger,
    dashboard,
  });
  if (config.testCronClockFile) app.log.warn({ file: config.testCronClockFile }, 'DROVER_TEST_CRON_CLOCK_FILE is set: cron slots follow the time in this file, not the clock (for tests only)');
  return app;
}

/** SIGTERM and SIGINT close the server, then the process exits (1 when the shutdown failed). */
function closeOnSignals(app: FastifyInstance, close: () => Promise<void>): void {
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

/** `drover serve`: open the store, migrate, bootstrap, listen; stop cleanly on SIGTERM/SIGINT. */
export async function startServer(config: ServerConfig, options: { handleSignals?: boolean } = {}): Promise<RunningServer> {
  prepareDataDir(config.dataDir);
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  const announce = (line: string) => process.stdout.write(line + '\n');
  const store = await openMigratedStore(config);
  const adminToken = resolveAdminToken(config, announce);
  const runtime = serverRuntime(config, store, logger, announce);
  await bootstrap(runtime, config, announce);
  const app = await serverApp(runtime, config, logger, adminToken);
  let localRunner: LocalRunner | null = null;

  // While shutting down, every answer asks the client to close its connection, so keep-alive
  // connections do not hold the exit back until their idle timeout.
  let draining = false;
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await localRunner?.shutdown();
        await runtime.stopLoops();
        // Stops accepting, lets in-flight requests finish, then closes runner links and records
        // their disconnects (the gateway's onClose); only then is the store closed.
        await app.close();
        await store.close();
      } finally {
        clearInterval(idleSweep);
      }
    })());
  // Installed before listening: a signal at any point of the start-up still shuts down cleanly.
  if (options.handleSignals) closeOnSignals(app, close);

  await runtime.start();
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  announce(`Drover listening on ${url} (${store.description})`);
  if (config.localRunner && !closing) {
    const prepared = await LocalRunner.prepare(runtime.ctx, {
      dataDir: config.dataDir,
      serverUrl: url,
      maxPods: config.localRunnerMaxPods,
      startWaitMs: config.localRunnerStartWaitMs,
      sandbox: config.localRunnerSandbox,
      log: (line, level = 'info') => app.log[level](line),
      connected: (runnerId, workDir) => announce(`Local runner ${runnerId} connected (work dir ${workDir})`),
    });
    // Held before it starts: a shutdown while it starts (a signal right after "listening") stops
    // it and waits for it, rather than leaving it running on its own.
    if (prepared && !closing) {
      localRunner = prepared;
      await localRunner.start();
    }
  }
  return { app, url, close };
}
