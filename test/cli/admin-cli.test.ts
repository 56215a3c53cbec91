/**
 * `drover admin …` (docs/api.md) as real child processes against a real `drover serve`:
 * organizations, API keys, users; where the admin token comes from; exit codes and messages
 * for usage errors, server errors and an unreachable server.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import {
  DROVER_BIN,
  childEnv,
  createProcessTestDatabase,
  http as call,
  runDrover,
  startServerProcess,
  type CommandResult,
  type ServerProcess,
} from '../helpers/server-process.ts';
import { unusedPort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { removeRunnerCgroups, runnerCgroupDirs } from '../../src/runner/limits/cgroups.ts';

interface Fixture {
  database: TestDatabase;
  server: ServerProcess;
  adminToken: string;
  /** An empty directory to run the CLI in, so no stray `./.drover/admin-token` is found. */
  cwd: string;
}

async function setUp(kind: TestDatabase['kind']): Promise<Fixture> {
  const database = await createProcessTestDatabase(kind);
  const server = await startServerProcess({ dataDir: database.dataDir, env: database.env });
  const adminToken = fs.readFileSync(path.join(database.dataDir, 'admin-token'), 'utf8').trim();
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-cli-cwd-'));
  return { database, server, adminToken, cwd };
}

async function tearDown(fixture: Fixture | undefined): Promise<void> {
  if (!fixture) return;
  await fixture.server.stop();
  await fixture.database.cleanup();
  fs.rmSync(fixture.cwd, { recursive: true, force: true });
}

/** `drover admin <args> --json` (the API's JSON, which these tests read) with no admin token in the environment unless given. */
function admin(fixture: Fixture, args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  return runDrover(['admin', ...args, ...(args.length >= 2 ? ['--json'] : [])], { env, cwd: fixture.cwd });
}

function json<T>(result: CommandResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON on stdout (exit ${result.code}):\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  }
}

function ok(result: CommandResult): CommandResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return result;
}

interface Org {
  id: number;
  slug: string;
  name: string;
  ticket_prefix: string;
  created_at: string;
}
interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  revoked_at?: string | null;
}

describe.each(DATABASES)('drover admin against a real server (%s)', (kind) => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await setUp(kind);
  });
  afterAll(() => tearDown(fixture));

  /** With the admin token read from `--data-dir`. */
  const run = (args: string[]) => admin(fixture, [...args, '--server', fixture.server.url, '--data-dir', fixture.database.dataDir]);

  it('orgs create, orgs list', async () => {
    const created = json<{ org: Org }>(ok(await run(['orgs', 'create', '--slug', 'cli-org', '--name', 'CLI Org', '--ticket-prefix', 'CLI'])));
    expect(created.org).toMatchObject({ slug: 'cli-org', name: 'CLI Org', ticket_prefix: 'CLI', id: expect.any(Number) });
    expect(created.org.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const listed = json<{ orgs: Org[] }>(ok(await run(['orgs', 'list'])));
    expect(listed.orgs.map((o) => o.slug).sort()).toEqual(['cli-org', 'default']);
  });

  it('api-keys create prints the key once; list never shows it; revoke makes it 401', async () => {
    const created = json<{ api_key: ApiKey; key: string }>(
      ok(await run(['api-keys', 'create', '--org', 'cli-org', '--name', 'ci', '--scopes', 'tickets:read,tickets:write'])),
    );
    expect(created.key).toMatch(/^drv_[A-Za-z0-9]{32,}$/);
    expect(created.api_key).toMatchObject({ name: 'ci', scopes: ['tickets:read', 'tickets:write'], prefix: created.key.slice(0, 12) });

    // The key works over HTTP, in its own organization.
    const ticketPath = '/api/v1/ext/orgs/cli-org/tickets';
    const ticket = await call(fixture.server.url, 'POST', ticketPath, { key: created.key, body: { type: 'bug', title: 'made with a CLI key' } });
    expect(ticket.status).toBe(201);
    expect(ticket.body).toMatchObject({ ticket: { slug: 'CLI-1' } });
    expect((await call(fixture.server.url, 'GET', ticketPath, { key: created.key })).status).toBe(200);
    expect((await call(fixture.server.url, 'GET', '/api/v1/ext/orgs/default/tickets', { key: created.key })).status).toBe(404);

    const list = ok(await run(['api-keys', 'list', '--org', 'cli-org']));
    expect(list.stdout).not.toContain(created.key);
    const keys = json<{ api_keys: ApiKey[] }>(list).api_keys;
    expect(keys.map((k) => k.id)).toEqual([created.api_key.id]);
    expect(keys[0]).not.toHaveProperty('key');

    const revoked = ok(await run(['api-keys', 'revoke', '--org', 'cli-org', '--id', String(created.api_key.id)]));
    expect(json<{ message: string }>(revoked).message).toMatch(/revoked/i);
    expect((await call(fixture.server.url, 'GET', ticketPath, { key: created.key })).status).toBe(401);
  });

  it('users create, users list; a created user can be a ticket assignee', async () => {
    const created = json<{ user: { id: number; name: string; email: string } }>(
      ok(await run(['users', 'create', '--org', 'default', '--name', 'Ada', '--email', 'ada@example.com'])),
    );
    expect(created.user).toMatchObject({ id: expect.any(Number), name: 'Ada', email: 'ada@example.com' });
    const listed = json<{ users: Array<{ id: number; email: string }> }>(ok(await run(['users', 'list', '--org', 'default'])));
    expect(listed.users.map((u) => [u.id, u.email])).toEqual([[created.user.id, 'ada@example.com']]);

    const key = fs.readFileSync(path.join(fixture.database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const ticket = await call(fixture.server.url, 'POST', '/api/v1/ext/orgs/default/tickets', {
      key,
      body: { type: 'task', title: 'assigned', assignee_id: created.user.id },
    });
    expect(ticket.status).toBe(201);
    expect(ticket.body).toMatchObject({ ticket: { assignee_id: created.user.id } });
  });
});

describe('drover admin: where the admin token comes from, and errors', () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await setUp('sqlite');
  });
  afterAll(() => tearDown(fixture));

  it('from DROVER_DATA_DIR, DROVER_ADMIN_TOKEN or --admin-token (flag > environment > data dir)', async () => {
    const server = fixture.server.url;
    const wrongDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-wrong-token-'));
    fs.writeFileSync(path.join(wrongDir, 'admin-token'), 'drvadm_wrong\n');
    try {
      // (--data-dir is what every command of the suite above uses.)
      const [fromDataDirEnv, fromEnv, fromFlag, envBeatsDir, flagBeatsEnv, wrong] = await Promise.all([
        admin(fixture, ['orgs', 'list', '--server', server], { DROVER_DATA_DIR: fixture.database.dataDir }),
        admin(fixture, ['orgs', 'list'], { DROVER_ADMIN_TOKEN: fixture.adminToken, DROVER_SERVER_URL: server }),
        admin(fixture, ['orgs', 'list', '--server', server, '--admin-token', fixture.adminToken]),
        admin(fixture, ['orgs', 'list', '--server', server, '--data-dir', wrongDir], { DROVER_ADMIN_TOKEN: fixture.adminToken }),
        admin(fixture, ['orgs', 'list', '--server', server, '--admin-token', fixture.adminToken], { DROVER_ADMIN_TOKEN: 'drvadm_wrong' }),
        admin(fixture, ['orgs', 'list', '--server', server, '--data-dir', wrongDir]),
      ]);
      for (const result of [fromDataDirEnv, fromEnv, fromFlag, envBeatsDir, flagBeatsEnv]) {
        expect(json<{ orgs: Org[] }>(ok(result)).orgs.map((o) => o.slug)).toEqual(['default']);
      }
      // A wrong token: the server's 401 body on stderr, exit 1.
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toBe('');
      expect(JSON.parse(wrong.stderr)).toMatchObject({ code: 'INVALID_API_KEY' });
    } finally {
      fs.rmSync(wrongDir, { recursive: true, force: true });
    }
  });

  it('no admin token anywhere: exit 1 saying where it looked', async () => {
    const result = await admin(fixture, ['orgs', 'list', '--server', fixture.server.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no admin token/);
    expect(result.stderr).toContain(path.join(fixture.cwd, '.drover', 'admin-token'));
  });

  it('usage errors exit 2: an unknown command with a suggestion; the usage for no command, an unknown flag, missing flags', async () => {
    const server = fixture.server.url;
    const [unknown, none, unknownFlag, missing] = await Promise.all([
      admin(fixture, ['orgs', 'frobnicate', '--server', server]),
      admin(fixture, []),
      admin(fixture, ['orgs', 'list', '--server', server, '--bogus', 'x']),
      admin(fixture, ['orgs', 'create', '--slug', 'half', '--server', server, '--admin-token', fixture.adminToken]),
    ]);
    for (const result of [unknown, none, unknownFlag, missing]) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
    }
    for (const result of [none, unknownFlag, missing]) {
      expect(result.stderr).toMatch(/Usage:/);
      expect(result.stderr).toMatch(/drover admin orgs create --slug <slug> --name <name>/);
    }
    expect(unknown.stderr).toBe(`drover: unknown command 'admin orgs frobnicate'\nRun "drover admin --help" for the list of commands.\n`);
    expect(unknownFlag.stderr).toMatch(/--bogus/);
    expect(missing.stderr).toMatch(/^missing --name\b/);
    // Nothing reached the server: "half" was not created.
    const orgs = await call(server, 'GET', '/api/v1/admin/orgs', { bearer: fixture.adminToken });
    expect((orgs.body as { orgs: Org[] }).orgs.map((o) => o.slug)).not.toContain('half');
  });

  it('an unknown top-level command exits 2 with one line, not the whole help', async () => {
    const result = await runDrover(['frobnicate'], { cwd: fixture.cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`drover: unknown command 'frobnicate'\nRun "drover --help" for the list of commands.\n`);
  });

  it('a server error (duplicate org, unknown key id) exits 1 with the error JSON on stderr', async () => {
    const args = ['--server', fixture.server.url, '--admin-token', fixture.adminToken];
    ok(await admin(fixture, ['orgs', 'create', '--slug', 'dup', '--name', 'Dup', ...args]));
    const [duplicate, unknownKey] = await Promise.all([
      admin(fixture, ['orgs', 'create', '--slug', 'dup', '--name', 'Dup again', ...args]),
      admin(fixture, ['api-keys', 'revoke', '--org', 'dup', '--id', '999999', ...args]),
    ]);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe('');
    expect(JSON.parse(duplicate.stderr)).toMatchObject({ code: 'ALREADY_EXISTS', error: expect.stringContaining('dup'), request_id: expect.any(String) });
    expect(unknownKey.code).toBe(1);
    expect(JSON.parse(unknownKey.stderr)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('an unreachable server exits 3 naming the URL and the cause (ECONNREFUSED, ENOTFOUND)', async () => {
    const port = await unusedPort();
    const refused = await admin(fixture, ['orgs', 'list', '--server', `http://127.0.0.1:${port}`, '--admin-token', 'whatever']);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(new RegExp(`^drover admin: cannot reach the server at http://127\\.0\\.0\\.1:${port}/api/v1/admin/orgs: .*ECONNREFUSED`));
    const unknown = await admin(fixture, ['orgs', 'list', '--server', 'http://drover.invalid:7070', '--admin-token', 'whatever']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/cannot reach the server at http:\/\/drover\.invalid:7070\/api\/v1\/admin\/orgs: .*ENOTFOUND/);
  });

  it('--help works at every level: drover admin, a group, a command; serve and runner too (exit 0, stdout)', async () => {
    const [all, group, command, serve, runner] = await Promise.all([
      admin(fixture, ['--help']),
      admin(fixture, ['api-keys', '--help']),
      admin(fixture, ['orgs', 'create', '--help']),
      runDrover(['serve', '--help'], { cwd: fixture.cwd }),
      runDrover(['runner', '--help'], { cwd: fixture.cwd }),
    ]);
    for (const result of [all, group, command, serve, runner]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/Usage:/);
    }
    expect(all.stdout).toContain('drover admin agents create');
    expect(group.stdout).toContain('drover admin api-keys create --org <org> --name <name> --scopes <scopes>');
    expect(group.stdout).toContain('drover admin api-keys revoke');
    expect(group.stdout).not.toContain('drover admin orgs');
    expect(command.stdout).toContain('drover admin orgs create --slug <slug> --name <name> [--ticket-prefix <ticket-prefix>]');
    expect(command.stdout).not.toContain('orgs list');
    for (const option of ['--host', '--port', '--data-dir', '--no-local-runner']) expect(serve.stdout).toContain(option);
    for (const option of ['--server', '--token', '--name', '--labels', '--max-pods', '--work-dir', '--drain-seconds']) expect(runner.stdout).toContain(option);
    // Nothing started: --help is not a server or runner that runs.
    expect(serve.stdout).not.toMatch(/listening/);
  });

  it('a runner that cannot reach its server to register names the URL and the cause, and leaves no control group or temporary HOME behind', async () => {
    const port = await unusedPort();
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-runner-unreachable-'));
    // An agent whose `--version` takes a while: the runner asks it beside its registration, which fails first.
    const bin = path.join(workDir, 'bin');
    const tmp = path.join(workDir, 'tmp');
    fs.mkdirSync(bin);
    fs.mkdirSync(tmp);
    fs.writeFileSync(path.join(bin, 'claude'), '#!/bin/sh\nsleep 2\necho 9.9.9\n', { mode: 0o755 });
    try {
      const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, TMPDIR: tmp };
      const result = await runDrover(['runner', '--server', `http://127.0.0.1:${port}`, '--token', 'drvreg_unused', '--work-dir', path.join(workDir, 'runner')], { cwd: fixture.cwd, env });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^drover: registration failed: cannot reach the server at http://127\\.0\\.0\\.1:${port}/api/v1/runner/register: .*ECONNREFUSED`));
      // Its groups are made (and self-tested) before it registers; a failed start removes them.
      expect(runnerCgroupDirs(fs.realpathSync(path.join(workDir, 'runner')))).toEqual([]);
      // The agents' --version probes ran in a HOME of their own in the work dir: the failed start
      // waited for them to remove it. Nothing was left in TMPDIR either.
      expect(fs.readdirSync(path.join(workDir, 'runner'))).not.toContain('agent-versions');
      expect(fs.readdirSync(tmp)).toEqual([]);
    } finally {
      if (fs.existsSync(path.join(workDir, 'runner'))) await removeRunnerCgroups(fs.realpathSync(path.join(workDir, 'runner')));
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('a runner signalled while it starts says it stops once the start is done; a second signal stops it at once', async () => {
    // A server that takes the registration request and never answers: the start waits (up to 30 s).
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-runner-signalled-'));
    try {
      const child = spawn(process.execPath, [DROVER_BIN, 'runner', '--server', `http://127.0.0.1:${port}`, '--token', 'drvreg_unused', '--work-dir', workDir], {
        cwd: fixture.cwd,
        env: childEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      // Its registration request has reached the silent server: the start is under way.
      const connected = new Promise<void>((resolve) => silent.once('connection', () => resolve()));
      await connected;
      child.kill('SIGTERM');
      await waitFor(() => stderr.includes('SIGTERM while starting'), { timeout: 10_000, interval: 20, what: 'the runner to say it stops once started' });
      expect(stderr).toContain('SIGTERM while starting: the runner stops once its start is done (SIGTERM again stops it at once)');
      expect(child.exitCode).toBeNull();
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
    } finally {
      silent.close();
      if (fs.existsSync(workDir)) await removeRunnerCgroups(fs.realpathSync(workDir));
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('a server that cannot reach its PostgreSQL names the URL (without the password) and the cause', async () => {
    const port = await unusedPort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-serve-unreachable-'));
    try {
      const result = await runDrover(['serve', '--port', '0', '--data-dir', dataDir], {
        cwd: fixture.cwd,
        env: { DATABASE_URL: `postgres://drover:hunter2secret@127.0.0.1:${port}/drover` },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^drover: cannot reach the database at postgres://drover:\\*\\*\\*@127\\.0\\.0\\.1:${port}/drover: .*ECONNREFUSED`));
      expect(result.stderr + result.stdout).not.toContain('hunter2secret');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a bad flag of serve or runner is a usage error (exit 2) with the usage', async () => {
    const [serve, runner] = await Promise.all([runDrover(['serve', '--bogus'], { cwd: fixture.cwd }), runDrover(['runner', '--bogus'], { cwd: fixture.cwd })]);
    for (const result of [serve, runner]) {
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--bogus/);
      expect(result.stderr).toMatch(/Usage: drover (serve|runner)/);
    }
  });
});

describe.each(DATABASES)('drover admin updates and deletes (%s)', (kind) => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await setUp(kind);
  });
  afterAll(() => tearDown(fixture));

  const run = (args: string[]) => admin(fixture, [...args, '--server', fixture.server.url, '--data-dir', fixture.database.dataDir]);

  it('orgs update: the default organization starts with prefix DEF and takes a new one', async () => {
    const before = json<{ orgs: Org[] }>(ok(await run(['orgs', 'list']))).orgs.find((o) => o.slug === 'default');
    expect(before?.ticket_prefix).toBe('DEF');
    const updated = json<{ org: Org }>(ok(await run(['orgs', 'update', '--org', 'default', '--ticket-prefix', 'MAIN', '--name', 'Main'])));
    expect(updated.org).toMatchObject({ slug: 'default', name: 'Main', ticket_prefix: 'MAIN' });
    const nothing = await run(['orgs', 'update', '--org', 'default']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^nothing to change: give at least one of --name, --ticket-prefix/);
  });

  it('users update and delete', async () => {
    const { user } = json<{ user: { id: number } }>(ok(await run(['users', 'create', '--org', 'default', '--name', 'Bo', '--email', 'bo@example.com'])));
    const updated = json<{ user: { email: string } }>(ok(await run(['users', 'update', '--org', 'default', '--id', String(user.id), '--email', 'Bo2@Example.com'])));
    expect(updated.user.email).toBe('bo2@example.com');
    expect(json<{ message: string }>(ok(await run(['users', 'delete', '--org', 'default', '--id', String(user.id)]))).message).toMatch(/deleted/);
    const again = await run(['users', 'delete', '--org', 'default', '--id', String(user.id)]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('repositories update (token from the environment, then cleared) and delete', async () => {
    const created = json<{ repository: { id: number; has_token: boolean } }>(
      ok(await run(['repositories', 'create', '--org', 'default', '--name', 'cli-repo', '--full-name', 'acme/cli', '--provider', 'github', '--url', 'https://github.com/acme/cli.git'])),
    );
    const id = String(created.repository.id);
    const withToken = await admin(fixture, ['repositories', 'update', '--org', 'default', '--id', id, '--token-env', 'CLI_TOKEN', '--server', fixture.server.url, '--data-dir', fixture.database.dataDir], {
      CLI_TOKEN: 'ghp_from_env',
    });
    expect(json<{ repository: { has_token: boolean } }>(ok(withToken)).repository.has_token).toBe(true);
    expect(withToken.stdout).not.toContain('ghp_from_env');
    const cleared = json<{ repository: { has_token: boolean; ticket_prefix: string | null } }>(
      ok(await run(['repositories', 'update', '--org', 'default', '--id', id, '--clear-token', '--clear-ticket-prefix'])),
    );
    expect(cleared.repository).toMatchObject({ has_token: false, ticket_prefix: null });
    const both = await run(['repositories', 'update', '--org', 'default', '--id', id, '--token', 'x', '--clear-token']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/--token or --clear-token, not both/);
    expect(json<{ message: string }>(ok(await run(['repositories', 'delete', '--org', 'default', '--id', id]))).message).toMatch(/deleted/);
  });

  it('runner-tokens create --uses, list, revoke', async () => {
    const created = json<{ token: string; runner_token: { id: number; uses: number } }>(ok(await run(['runner-tokens', 'create', '--org', 'default', '--uses', '3', '--labels', 'gpu'])));
    expect(created.runner_token.uses).toBe(3);
    const list = ok(await run(['runner-tokens', 'list', '--org', 'default']));
    expect(list.stdout).not.toContain(created.token);
    expect(json<{ runner_tokens: { id: number; uses_left: number; prefix: string }[] }>(list).runner_tokens[0]).toMatchObject({
      id: created.runner_token.id,
      uses_left: 3,
      prefix: created.token.slice(0, 12),
    });
    ok(await run(['runner-tokens', 'revoke', '--org', 'default', '--id', String(created.runner_token.id)]));
    const registered = await call(fixture.server.url, 'POST', '/api/v1/runner/register', {
      body: { token: created.token, name: 'x', labels: [], max_pods: 1, version: '1', os: 'linux', arch: 'x64' },
    });
    expect(registered.status).toBe(401);
  });

  it('agents update and delete', async () => {
    ok(await run(['agents', 'create', '--org', 'default', '--slug', 'cli-bot', '--name', 'Bot', '--command', '/bin/true']));
    const updated = json<{ agent: { command: string; args: string[] } }>(ok(await run(['agents', 'update', '--org', 'default', '--slug', 'cli-bot', '--command', '/bin/echo', '--args', 'a,b'])));
    expect(updated.agent).toMatchObject({ command: '/bin/echo', args: ['a', 'b'] });
    ok(await run(['agents', 'delete', '--org', 'default', '--slug', 'cli-bot']));
    expect(json<{ agents: unknown[] }>(ok(await run(['agents', 'list', '--org', 'default']))).agents).toEqual([]);
  });

  it('--help on every level: all commands, one resource, one command (exit 0, stdout)', async () => {
    const [all, resource, command] = await Promise.all([admin(fixture, ['--help']), admin(fixture, ['repositories', '--help']), admin(fixture, ['runner-tokens', 'create', '--help'])]);
    for (const result of [all, resource, command]) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage:/);
    }
    for (const name of ['orgs update', 'users delete', 'repositories update', 'repositories delete', 'runner-tokens list', 'runner-tokens revoke', 'agents update', 'agents delete']) {
      expect(all.stdout).toContain(`drover admin ${name}`);
    }
    expect(resource.stdout).toContain('drover admin repositories update');
    expect(resource.stdout).toContain('[--clear-token]');
    expect(resource.stdout).not.toContain('drover admin orgs');
    expect(command.stdout).toContain('drover admin runner-tokens create --org <org> [--labels <labels>] [--expires-in-hours <expires-in-hours>] [--uses <uses>]');
    expect(command.stdout).not.toContain('runner-tokens list');
  });
});
