/**
 * Real `drover` child processes for end-to-end tests: `drover serve` started the way an operator
 * starts it (`node bin/drover.mjs serve --port 0 --host 127.0.0.1 --data-dir <dir>`), and one-shot
 * commands such as `drover admin …`.
 *
 * `--no-local-runner` is added unless `localRunner: true` is asked for, so that a test sees only
 * its own requests. Children get a minimal environment (PATH, HOME, the test database's variables, and
 * the three rate limits off unless given), never the test runner's own. No child outlives
 * its test: servers started inside a test are killed after that test, servers started in
 * beforeAll after the file, and any survivor when the worker exits.
 *
 * PostgreSQL: `DATABASE_URL=postgres://…?options=-c%20search_path%3D<schema>` (or the `+`-encoded
 * form `createTestDatabase` writes) is understood by `pg`'s connection-string parser, which turns
 * the `options` parameter into the startup option `-c search_path=<schema>`; the server keeps its
 * tables in that schema. (test/store/postgres-concurrency.test.ts checks this.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, onTestFinished } from 'vitest';
import { removeRunnerCgroups } from '../../src/runner/limits/cgroups.ts';
import { childrenOf } from '../../src/runner/process-group.ts';
import type { DatabaseKind } from '../../src/store/db.ts';
import { createMigratedTestDatabase, createTestDatabase, type TestDatabase } from './databases.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DROVER_BIN = path.join(REPO_ROOT, 'bin', 'drover.mjs');

const LISTENING = /^Drover listening on (http:\/\/\S+)/m;
const LOCAL_RUNNER_CONNECTED = /^Local runner (\d+) connected/m;

export interface ServerProcess {
  /** `http://127.0.0.1:<port>`, as printed by the server. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the server wrote so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** The stdout lines that are JSON (pino log records), parsed. */
  logRecords(): Array<Record<string, unknown>>;
  /** The stdout lines that are not JSON: the announcements (`Drover listening on …`, keys shown once). */
  announcements(): string[];
  /**
   * Waits for `Local runner <id> connected` (a `localRunner: true` server) and returns the id. A
   * runner's start on a loaded machine (a CI run: every file at once on 2 cores) can take well over
   * 10 s, hence the default of 45 s; a timeout shows what the server printed.
   */
  localRunnerConnected(timeoutMs?: number): Promise<number>;
  /** Resolves with the exit code (null when a signal ended the process) once the child has exited. */
  readonly exited: Promise<number | null>;
  /**
   * Sends `signal` (default SIGTERM) and waits for the exit code; SIGKILLs and throws if the child
   * is still alive after `timeoutMs`. The exit code is null when the signal itself killed it.
   */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  /** Waits for the exit code without sending anything; SIGKILLs and throws after `timeoutMs`. */
  waitForExit(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL, then waits for the exit (and for its local runner's, up to 10 s). */
  kill9(): Promise<void>;
}

export interface ServeOptions {
  /** `--data-dir`. */
  dataDir: string;
  /** Extra environment (the test database's `env`, DROVER_ADMIN_TOKEN, …). */
  env?: Record<string, string | undefined>;
  /** Extra arguments after `serve --port 0 --host 127.0.0.1 --data-dir <dir>`. */
  args?: string[];
  /**
   * Keep the in-process local runner that `drover serve` starts by default on SQLite (default:
   * false, i.e. `--no-local-runner` is added, so a test sees only its own requests).
   */
  localRunner?: boolean;
  /** How long to wait for `Drover listening on …` (default 30 s). */
  timeoutMs?: number;
}

const live = new Set<ChildProcess>();

/** Servers that run a local runner, with its work dir: stopped with SIGTERM first (see kill). */
const withLocalRunner = new WeakMap<ChildProcess, string>();

/**
 * SIGKILL, then waits for the exit. A server with a local runner gets SIGTERM first and up to 10 s:
 * it then stops its runner before it exits, where a SIGKILLed one would leave the runner writing
 * into a data directory the test is about to remove.
 */
async function kill(child: ChildProcess): Promise<void> {
  live.delete(child);
  const runnerDir = withLocalRunner.get(child);
  // A local runner that was SIGKILLed with its server (by the test, or below) leaves its control groups.
  const removeRunnerGroups = () => (runnerDir === undefined ? undefined : removeRunnerCgroups(runnerDir));
  if (child.exitCode !== null || child.signalCode !== null) return removeRunnerGroups();
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (runnerDir !== undefined) {
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (child.exitCode !== null || child.signalCode !== null) return removeRunnerGroups();
  }
  await killAndWaitForHelpers(child, gone);
  await removeRunnerGroups();
}

/**
 * SIGKILLs a server and waits (up to 10 s) for the processes it had started to be gone: its local
 * runner stops its pods once its server is gone, writing in the data directory as it does, and
 * should be done before the test removes that directory.
 */
async function killAndWaitForHelpers(child: ChildProcess, gone: Promise<unknown>): Promise<void> {
  const helpers = child.pid === undefined ? [] : childrenOf(child.pid);
  child.kill('SIGKILL');
  await gone;
  const deadline = Date.now() + 10_000;
  while (helpers.some((pid) => fs.existsSync(`/proc/${pid}`)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * Registers a child for clean-up: inside a test, it is killed when that test finishes; otherwise
 * (beforeAll, module scope) when the file is done. Survivors die with the worker.
 */
function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  try {
    onTestFinished(() => kill(child));
  } catch {
    // not inside a test: the afterAll below takes it
  }
}

try {
  afterAll(() => Promise.all([...live].map(kill)).then(() => undefined));
} catch {
  // imported outside a vitest suite (a script): the exit handler below still applies
}
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** The environment a child gets: nothing of ours except PATH and HOME. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    DROVER_RATE_LIMIT_PER_MINUTE: '0',
    DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
    DROVER_REGISTER_LIMIT_PER_MINUTE: '0',
  };
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function exitPromise(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Starts `drover serve` and resolves once it prints `Drover listening on …`. */
export async function startServerProcess(options: ServeOptions): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const args = [DROVER_BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', options.dataDir, ...(options.args ?? [])];
  if (!options.localRunner) args.push('--no-local-runner');
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  if (options.localRunner) withLocalRunner.set(child, path.join(options.dataDir, 'runner'));
  track(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = exitPromise(child);

  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      clearInterval(poll);
      child.kill('SIGKILL');
      reject(new Error(`drover serve ${why}\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout}`));
    };
    const timer = setTimeout(() => fail(`did not print "Drover listening on" within ${timeoutMs} ms`), timeoutMs);
    const poll = setInterval(() => {
      const match = LISTENING.exec(stdout);
      if (match) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(match[1]);
      }
    }, 10);
    void exited.then((code) => {
      if (!LISTENING.test(stdout)) fail(`exited (code ${code}, signal ${child.signalCode}) before listening`);
    });
  });

  const lines = () => stdout.split('\n').filter((line) => line.length > 0);
  return {
    url,
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    logRecords: () =>
      lines().flatMap((line) => {
        if (!line.startsWith('{')) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    announcements: () => lines().filter((line) => !line.startsWith('{')),
    async localRunnerConnected(connectTimeoutMs = 45_000) {
      const deadline = Date.now() + connectTimeoutMs;
      for (;;) {
        const announced = LOCAL_RUNNER_CONNECTED.exec(stdout);
        if (announced) return Number(announced[1]);
        const ended = child.exitCode !== null || child.signalCode !== null;
        if (ended || Date.now() >= deadline) {
          const why = ended ? `exited (code ${child.exitCode}, signal ${child.signalCode})` : `did not announce its local runner within ${connectTimeoutMs} ms`;
          throw new Error(`drover serve ${why}\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM', stopTimeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return waitForExit(stopTimeoutMs, signal);
    },
    waitForExit: (stopTimeoutMs = 15_000) => waitForExit(stopTimeoutMs),
    async kill9() {
      await killAndWaitForHelpers(child, exited);
    },
  };

  async function waitForExit(stopTimeoutMs: number, signal?: NodeJS.Signals): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), stopTimeoutMs)));
    const result = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`drover serve did not exit within ${stopTimeoutMs} ms${signal ? ` of ${signal}` : ''}\n--- stderr ---\n${stderr}`);
    }
    return result;
  }
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/drover.mjs <args>` to completion (killed after `timeoutMs`, default 30 s), with `input` on stdin if given. */
export async function runDrover(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<CommandResult> {
  const child = spawn(process.execPath, [DROVER_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  track(child);
  if (options.input !== undefined) child.stdin!.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  if (signal === 'SIGKILL') throw new Error(`drover ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stderr}`);
  return { code, signal, stdout, stderr };
}

/**
 * A fresh database for child processes, migrated from the run's template unless `migrated: false`
 * (then the server migrates it itself, as on a first start: test/cli/serve.test.ts), like
 * `createTestDatabase(kind)` otherwise. On PostgreSQL, migrating was a quarter of a `drover serve`
 * start (7.2 s to listening, 5.5 s on a migrated copy, at load 13; on SQLite it costs little);
 * docs/design.md "Tests: workers and order". On PostgreSQL the schema
 * lives in a database of its own (dropped with `with (force)` by `cleanup()`, which also ends any
 * connection a killed server left behind), not in DATABASE_URL's shared database: so a test can
 * assert what exists in the whole database (nothing outside its schema), and suites running at
 * the same time cannot see each other's schemas. (Kysely's migrator used to mistake another
 * schema's bookkeeping tables for ours; see test/store/postgres-concurrency.test.ts.)
 */
export async function createProcessTestDatabase(kind: DatabaseKind, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const create = options.migrated === false ? createTestDatabase : createMigratedTestDatabase;
  if (kind === 'sqlite') return create('sqlite');
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('PostgreSQL tests need DATABASE_URL');
  const name = `drover_t_${crypto.randomBytes(6).toString('hex')}`;
  await withClient(baseUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  // createTestDatabase reads DATABASE_URL synchronously, before its first await.
  process.env.DATABASE_URL = url.toString();
  let pending: Promise<TestDatabase>;
  try {
    pending = create('postgres');
  } finally {
    process.env.DATABASE_URL = baseUrl;
  }
  const database = await pending;
  return {
    ...database,
    async cleanup() {
      await database.cleanup();
      await withClient(baseUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** The plain database URL of a PostgreSQL test database (without the search_path option). */
export function postgresDatabaseUrl(database: TestDatabase): string {
  const url = new URL(database.env.DATABASE_URL);
  url.searchParams.delete('options');
  return url.toString();
}

/** The schema a PostgreSQL test database's DATABASE_URL selects. */
export function postgresSchema(database: TestDatabase): string {
  const options = new URL(database.env.DATABASE_URL).searchParams.get('options') ?? '';
  const match = /search_path=(\w+)/.exec(options);
  if (!match) throw new Error(`no search_path in ${database.env.DATABASE_URL}`);
  return match[1];
}

export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** `fetch` against a server process, JSON in and out. */
export async function http(
  base: string,
  method: string,
  urlPath: string,
  options: { key?: string; bearer?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(base + urlPath, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, text, headers: response.headers };
}
