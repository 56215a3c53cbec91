/**
 * The command line client (docs/cli.md) as real `drover` child processes against a real
 * `drover serve` with its local runner, on every database: each command in both output modes
 * (tables and records by default, the API's JSON unchanged with --json), `login` and profiles,
 * the environment overrides, and the exit codes 0 (success), 1 (an API error, with its code,
 * message and request_id on stderr), 2 (usage) and 3 (no server: the URL and the cause).
 *
 * The streaming forms `pods run --follow`, `pods logs -f`, `channels tail` and `events`:
 * streams.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { unusedPort } from '../helpers/ports.ts';
import { REPO_ROOT, createProcessTestDatabase, http, runDrover, startServerProcess, type CommandResult, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_cli_client_admin_token_0123456789abcdef';
const ORG = '/api/v1/ext/orgs/default';

interface Fixture {
  database: TestDatabase;
  server: ServerProcess;
  key: string;
  home: string;
  xdg: string;
  scratch: string;
}

function ok(result: CommandResult): CommandResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return result;
}

function json<T>(result: CommandResult): T {
  ok(result);
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not one JSON document on stdout:\n${result.stdout}`);
  }
}

/** An API error on stderr: the message, its code, status and request id; exit 1, nothing on stdout. */
function expectApiError(result: CommandResult, code: string): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^drover: \S.*\n/);
  expect(result.stderr).toContain(`  code: ${code}\n`);
  expect(result.stderr).toMatch(/ {2}request_id: req_[0-9a-f]{32}\n/);
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe.each(DATABASES)('drover client commands against a real server (%s)', (kind) => {
  let f: Fixture;
  /** `drover <args>` as the user of the fixture's home (its profiles), with extra environment. */
  const cli = (args: string[], options: { env?: Record<string, string>; input?: string } = {}) =>
    runDrover(args, { env: { HOME: f.home, XDG_CONFIG_HOME: f.xdg, ...options.env }, input: options.input, cwd: f.scratch, timeoutMs: 60_000 });
  const api = (method: string, urlPath: string, body?: unknown) => http(f.server.url, method, urlPath, { key: f.key, body });
  /** The API's own answer to a GET, as text, for comparing with --json. */
  const raw = async (urlPath: string) => {
    const response = await api('GET', `${ORG}${urlPath}`);
    expect(response.status, response.text).toBe(200);
    return response.text;
  };
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    const database = await createProcessTestDatabase(kind);
    const server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOCAL_RUNNER: 'true' },
      localRunner: true,
    });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-cli-client-'));
    f = {
      database,
      server,
      key: fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim(),
      home: path.join(scratch, 'home'),
      xdg: path.join(scratch, 'xdg'),
      scratch,
    };
    fs.mkdirSync(f.home);
    const login = await cli(['login', '--server', f.server.url, '--org', 'default', '--api-key', f.key]);
    expect(login.stdout, login.stderr).toContain('Logged in to default');
  });

  afterAll(async () => {
    await f?.server.stop();
    await f?.database.cleanup();
    if (f) fs.rmSync(f.scratch, { recursive: true, force: true });
  });

  describe('login and profiles', () => {
    it('login checked the key and wrote the profile to $XDG_CONFIG_HOME/drover/config.json, mode 0600 in a 0700 directory', () => {
      const file = path.join(f.xdg, 'drover', 'config.json');
      expect(modeOf(file)).toBe(0o600);
      expect(modeOf(path.dirname(file))).toBe(0o700);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ current: 'default', profiles: { default: { server: f.server.url, org: 'default', api_key: f.key } } });
    });

    it('without XDG_CONFIG_HOME the profile goes to ~/.config; --json answers what was stored, without the key', async () => {
      const home = path.join(f.scratch, 'other-home');
      fs.mkdirSync(home);
      const result = await runDrover(['login', '--server', f.server.url, '--org', 'default', '--api-key', f.key, '--json'], { env: { HOME: home } });
      const answer = JSON.parse(ok(result).stdout);
      const file = path.join(home, '.config', 'drover', 'config.json');
      expect(answer).toEqual({ profile: 'default', server: f.server.url, org: 'default', config: file });
      expect(result.stdout).not.toContain(f.key);
      expect(modeOf(file)).toBe(0o600);
    });

    it('refuses an unknown key (401) and an organization the key does not belong to (404), writing nothing', async () => {
      const before = fs.readFileSync(path.join(f.xdg, 'drover', 'config.json'), 'utf8');
      expectApiError(await cli(['login', '--server', f.server.url, '--org', 'default', '--api-key', 'drv_not_a_key_0123456789012345678901234', '--profile', 'bad']), 'INVALID_API_KEY');
      expectApiError(await cli(['login', '--server', f.server.url, '--org', 'elsewhere', '--api-key', f.key, '--profile', 'bad']), 'NOT_FOUND');
      expect(fs.readFileSync(path.join(f.xdg, 'drover', 'config.json'), 'utf8')).toBe(before);
    });

    it('profiles: a second login becomes the current profile; --profile picks one; the environment overrides the current profile but not --profile', async () => {
      const issued = await http(f.server.url, 'POST', '/api/v1/admin/orgs/default/api-keys', { bearer: ADMIN_TOKEN, body: { name: 'pods reader', scopes: ['pods:read'] } });
      const readerKey = (issued.body as { key: string }).key;
      // A key without tickets:read is still a good key: login accepts it (the check's 403 comes after 401 and 404).
      ok(await cli(['login', '--server', f.server.url, '--org', 'default', '--api-key', readerKey, '--profile', 'reader']));
      const refused = await cli(['tickets', 'list']);
      expectApiError(refused, 'INSUFFICIENT_SCOPE');
      expect(refused.stderr).toContain('required scopes: tickets:read');
      ok(await cli(['tickets', 'list', '--profile', 'default']));
      ok(await cli(['pods', 'list']));
      // The environment overrides the current profile, field by field…
      ok(await cli(['tickets', 'list'], { env: { DROVER_API_KEY: f.key } }));
      expectApiError(await cli(['tickets', 'list'], { env: { DROVER_API_KEY: 'drv_bad_key_0123456789012345678901234567' } }), 'INVALID_API_KEY');
      ok(await cli(['tickets', 'list', '--profile', 'default'], { env: { DROVER_API_KEY: 'drv_bad_key_0123456789012345678901234567' } }));
      expectApiError(await cli(['tickets', 'list'], { env: { DROVER_ORG: 'elsewhere', DROVER_API_KEY: f.key } }), 'NOT_FOUND');
      // …and an unknown profile is a usage error.
      const unknown = await cli(['tickets', 'list', '--profile', 'nobody']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/no profile "nobody"/);
      ok(await cli(['login', '--server', f.server.url, '--org', 'default', '--api-key', f.key]));
      expect(JSON.parse(fs.readFileSync(path.join(f.xdg, 'drover', 'config.json'), 'utf8')).current).toBe('default');
    });

    it('with no config file at all, DROVER_API_URL, DROVER_ORG and DROVER_API_KEY (or DROVER_POD_TOKEN) are enough', async () => {
      const env = { HOME: path.join(f.scratch, 'nobody'), DROVER_API_URL: f.server.url, DROVER_ORG: 'default' };
      ok(await runDrover(['tickets', 'list'], { env: { ...env, DROVER_API_KEY: f.key } }));
      ok(await runDrover(['tickets', 'list'], { env: { ...env, DROVER_POD_TOKEN: f.key } }));
      const missing = await runDrover(['tickets', 'list'], { env });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/no API key \(DROVER_API_KEY\) configured/);
    });
  });

  describe('exit codes', () => {
    it('1: the API answered an error, with its message, code, status and request_id on stderr', async () => {
      const result = await cli(['tickets', 'get', 'NOPE-404']);
      expectApiError(result, 'NOT_FOUND');
      expect(result.stderr).toMatch(/^drover: ticket not found\n/);
      expect(result.stderr).toContain('  status: 404\n');
      const invalid = await cli(['tickets', 'create', '--type', 'bug', '--title', ' ']);
      expectApiError(invalid, 'VALIDATION_FAILED');
      expect(invalid.stderr).toContain('  /title: title must not be blank\n');
    });

    it('2: a usage error says what is wrong and where the help is, and calls nothing', async () => {
      const result = await cli(['tickets', 'list', '--limit', 'many']);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('drover: --limit must be an integer of at least 1, got "many"\nRun "drover tickets list --help" for its usage.\n');
      const top = await cli(['frobnicate']);
      expect(top.code).toBe(2);
      expect(top.stderr).toBe(`drover: unknown command 'frobnicate'\nRun "drover --help" for the list of commands.\n`);
    });

    it('3: the server cannot be reached, naming the URL and the cause (ECONNREFUSED, ENOTFOUND)', async () => {
      const port = await unusedPort();
      const refused = await cli(['tickets', 'list'], { env: { DROVER_API_URL: `http://127.0.0.1:${port}` } });
      expect(refused.code).toBe(3);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(new RegExp(`^drover: cannot reach the server at http://127\\.0\\.0\\.1:${port}/api/v1/ext/orgs/default/tickets: .*ECONNREFUSED`));
      const unknownHost = await cli(['pods', 'list'], { env: { DROVER_API_URL: 'http://drover.invalid:7070' } });
      expect(unknownHost.code).toBe(3);
      expect(unknownHost.stderr).toMatch(/cannot reach the server at http:\/\/drover\.invalid:7070\/api\/v1\/ext\/orgs\/default\/pods: .*ENOTFOUND/);
      const login = await cli(['login', '--server', `http://127.0.0.1:${port}`, '--org', 'default', '--api-key', f.key]);
      expect(login.code).toBe(3);
      expect(login.stderr).toContain(`http://127.0.0.1:${port}`);
    });
  });

  describe('tickets', () => {
    it('create, get, update, status, list, board, delete: readable by default, the API JSON with --json', async () => {
      const created = await cli(['tickets', 'create', '--type', 'bug', '--title', 'Login fails', '--priority', 'high', '--label', 'auth', '--label', 'web']);
      expect(ok(created).stdout).toMatch(/^slug +DEF-\d+$/m);
      expect(created.stdout).toMatch(/^labels +auth,web$/m);
      const slug = /^slug +(\S+)$/m.exec(created.stdout)![1];
      const other = json<{ ticket: { slug: string; type: string } }>(await cli(['tickets', 'create', '--type', 'feature', '--title', 'Dark mode', '--json']));
      expect(other.ticket.type).toBe('feature');

      const got = await cli(['tickets', 'get', slug]);
      expect(ok(got).stdout).toMatch(/^title +Login fails$/m);
      expect(ok(await cli(['tickets', 'get', slug, '--json'])).stdout).toBe(`${await raw(`/tickets/${slug}`)}\n`);

      const updated = await cli(['tickets', 'update', slug, '--priority', 'urgent', '--description', 'Steps:\nopen /login', '--clear-labels']);
      expect(ok(updated).stdout).toMatch(/^priority +urgent$/m);
      expect(updated.stdout).toMatch(/^labels +-$/m);
      expect(updated.stdout).toContain('description\n    Steps:\n    open /login');
      expect(json<{ ticket: { title: string; description: null } }>(await cli(['tickets', 'update', other.ticket.slug, '--title', 'Dark theme', '--description', 'none', '--json'])).ticket).toMatchObject({ title: 'Dark theme', description: null });

      expect(ok(await cli(['tickets', 'status', slug, 'in_review'])).stdout).toBe(`Ticket ${slug} moved to in_review.\n`);
      expect(json<{ message: string }>(await cli(['tickets', 'status', other.ticket.slug, 'done', '--json']))).toEqual({ message: `Ticket ${other.ticket.slug} moved to done.` });

      const list = ok(await cli(['tickets', 'list']));
      expect(list.stdout.split('\n')[0]).toMatch(/^SLUG +TYPE +STATUS +PRIORITY +ASSIGNEE +LABELS +TITLE$/);
      expect(list.stdout).toMatch(new RegExp(`^${slug} +bug +in_review +urgent +- +- +Login fails$`, 'm'));
      expect(ok(await cli(['tickets', 'list', '--json'])).stdout).toBe(`${await raw('/tickets')}\n`);
      const filtered = ok(await cli(['tickets', 'list', '--status', 'done', '--type', 'feature', '--limit', '1']));
      expect(filtered.stdout).toContain(other.ticket.slug);
      expect(filtered.stdout).not.toContain(slug);

      const board = ok(await cli(['tickets', 'board']));
      expect(board.stdout).toMatch(new RegExp(`^in_review \\(1\\)\\n {2}${slug} +urgent +bug +Login fails$`, 'm'));
      expect(board.stdout).toMatch(/^done \(1\)$/m);
      expect(ok(await cli(['tickets', 'board', '--json'])).stdout).toBe(`${await raw('/tickets/board')}\n`);

      expect(ok(await cli(['tickets', 'delete', slug])).stdout).toBe(`Ticket ${slug} deleted.\n`);
      expect(json<{ message: string }>(await cli(['tickets', 'delete', other.ticket.slug, '--json'])).message).toBe(`Ticket ${other.ticket.slug} deleted.`);
      expectApiError(await cli(['tickets', 'get', slug]), 'NOT_FOUND');
      expect(ok(await cli(['tickets', 'list'])).stdout).toBe('No tickets.\n');
    });
  });

  describe('pods and runners', () => {
    it('run, list, get, logs, terminate; runners list, get, pods', async () => {
      const started = ok(await cli(['pods', 'run', '--agent', 'shell', '--prompt', 'echo "hello from the cli"; echo "second line"']));
      const key = /^pod_key +(p-[a-z0-9]+)$/m.exec(started.stdout)![1];
      expect(started.stdout).toMatch(/^agent_slug +shell$/m);
      const viaJson = json<{ pod: { pod_key: string; status: string } }>(await cli(['pods', 'run', '--agent', 'shell', '--prompt', '-', '--json'], { input: 'echo from stdin\n' }));
      for (const pod of [key, viaJson.pod.pod_key]) {
        await until(() => api('GET', `${ORG}/pods/${pod}`), (r) => (r.body as { pod: { status: string } }).pod.status === 'completed', `pod ${pod} to complete`);
      }

      expect(ok(await cli(['pods', 'logs', key])).stdout).toBe('hello from the cli\nsecond line\n');
      expect(ok(await cli(['pods', 'logs', key, '--tail', '12'])).stdout).toBe('second line\n');
      expect(ok(await cli(['pods', 'logs', viaJson.pod.pod_key, '--json'])).stdout).toBe(`${await raw(`/pods/${viaJson.pod.pod_key}/output`)}\n`);
      expect(json<{ output: string }>(await cli(['pods', 'logs', viaJson.pod.pod_key, '--json'])).output).toBe('from stdin\n');

      const got = ok(await cli(['pods', 'get', key]));
      expect(got.stdout).toMatch(/^status +completed$/m);
      expect(got.stdout).toMatch(/^exit_code +0$/m);
      expect(ok(await cli(['pods', 'get', key, '--json'])).stdout).toBe(`${await raw(`/pods/${key}`)}\n`);

      const list = ok(await cli(['pods', 'list', '--status', 'completed']));
      expect(list.stdout.split('\n')[0]).toMatch(/^KEY +STATUS +AGENT +RUNNER +CREATED +BY +PROMPT$/);
      // The runner by name (the local runner's), not its id.
      expect(list.stdout).toMatch(new RegExp(`^${key} +completed +shell +[^\\s\\d]\\S* `, 'm'));
      expect(ok(await cli(['pods', 'list', '--json'])).stdout).toBe(`${await raw('/pods')}\n`);
      // Every status the API knows is a status the CLI takes (both read them from src/protocol/enums.ts).
      expect(ok(await cli(['pods', 'list', '--status', 'queued', '--json'])).stdout).toBe(`${await raw('/pods?status=queued')}\n`);
      expect(ok(await cli(['pods', 'list', '--help'])).stdout).toMatch(/queued, initializing, running/);

      const sleeper = json<{ pod: { pod_key: string } }>(await cli(['pods', 'run', '--agent', 'shell', '--prompt', 'sleep 60', '--json'])).pod.pod_key;
      const sleeper2 = json<{ pod: { pod_key: string } }>(await cli(['pods', 'run', '--agent', 'shell', '--prompt', 'sleep 60', '--json'])).pod.pod_key;
      expect(ok(await cli(['pods', 'terminate', sleeper])).stdout).toBe(`Pod ${sleeper} terminated.\n`);
      expect(json<{ message: string }>(await cli(['pods', 'terminate', sleeper2, '--json']))).toEqual({ message: `Pod ${sleeper2} terminated.` });
      expectApiError(await cli(['pods', 'terminate', sleeper]), 'POD_NOT_ACTIVE');

      const runners = ok(await cli(['runners', 'list']));
      expect(runners.stdout.split('\n')[0]).toMatch(/^ID +NAME +STATUS +PODS +OS +VERSION +LABELS +HEARTBEAT$/);
      const runnerId = Number(/^(\d+) +\S+ +online /m.exec(runners.stdout)![1]);
      const listed = json<{ runners: { id: number; status: string }[] }>(await cli(['runners', 'list', '--json']));
      expect(listed.runners.map((r) => r.id)).toEqual([runnerId]);
      expect(json<{ runners: { id: number }[] }>(await cli(['runners', 'list', '--available', '--json'])).runners.map((r) => r.id)).toEqual([runnerId]);
      expect(ok(await cli(['runners', 'get', String(runnerId)])).stdout).toMatch(/^status +online$/m);
      expect(json<{ runner: { id: number } }>(await cli(['runners', 'get', String(runnerId), '--json'])).runner.id).toBe(runnerId);
      expect(ok(await cli(['runners', 'pods', String(runnerId), '--status', 'terminated'])).stdout).toMatch(new RegExp(`^${sleeper} +terminated +shell +\\S+ `, 'm')); // the RUNNER column names the runner (runner pod lists carry runner_id)
      expect(ok(await cli(['runners', 'pods', String(runnerId), '--json'])).stdout).toBe(`${await raw(`/runners/${runnerId}/pods`)}\n`);
      expectApiError(await cli(['runners', 'get', '999999']), 'NOT_FOUND');
    });
  });

  describe('loops', () => {
    it('create, list, get, update, disable, enable, trigger, runs, run, cancel, delete', async () => {
      const created = ok(await cli(['loops', 'create', '--name', 'Nightly triage', '--agent', 'shell', '--prompt-template', 'sleep {{seconds}}', '--var', 'seconds=30', '--cron', '0 3 * * *', '--timezone', 'Europe/Berlin', '--concurrency', 'queue']));
      expect(created.stdout).toMatch(/^slug +nightly-triage$/m);
      expect(created.stdout).toMatch(/^callback_secret +\(hidden; --json shows it\)$/m);
      const viaJson = json<{ loop: { slug: string; callback_secret: string } }>(await cli(['loops', 'create', '--name', 'Other', '--slug', 'other', '--agent', 'shell', '--prompt-template', 'true', '--json']));
      expect(viaJson.loop.callback_secret).toMatch(/^whsec_/);

      const list = ok(await cli(['loops', 'list']));
      expect(list.stdout.split('\n')[0]).toMatch(/^SLUG +STATUS +AGENT +CRON +NEXT RUN +RUNS +NAME$/);
      expect(list.stdout).toMatch(/^nightly-triage +enabled +shell +0 3 \* \* \* \(Europe\/Berlin\) /m);
      expect(ok(await cli(['loops', 'list', '--json'])).stdout).toBe(`${await raw('/loops')}\n`);
      expect(ok(await cli(['loops', 'get', 'nightly-triage'])).stdout).toMatch(/^prompt_variables +\{"seconds":"30"\}$/m);
      expect(ok(await cli(['loops', 'get', 'other', '--json'])).stdout).toBe(`${await raw('/loops/other')}\n`);

      expect(ok(await cli(['loops', 'update', 'nightly-triage', '--cron', 'none', '--max-concurrent-runs', '2'])).stdout).toMatch(/^cron_expression +-$/m);
      expect(json<{ loop: { timeout_minutes: number } }>(await cli(['loops', 'update', 'other', '--timeout-minutes', '5', '--json'])).loop.timeout_minutes).toBe(5);
      expect(ok(await cli(['loops', 'disable', 'other'])).stdout).toMatch(/^status +disabled$/m);
      expectApiError(await cli(['loops', 'trigger', 'other']), 'LOOP_DISABLED');
      expect(json<{ loop: { status: string } }>(await cli(['loops', 'enable', 'other', '--json'])).loop.status).toBe('enabled');
      expect(json<{ loop: { status: string } }>(await cli(['loops', 'disable', 'other', '--json'])).loop.status).toBe('disabled');
      ok(await cli(['loops', 'enable', 'other']));

      const triggered = ok(await cli(['loops', 'trigger', 'nightly-triage', '--var', 'seconds=60']));
      expect(triggered.stdout).toMatch(/^resolved_prompt +sleep 60$/m);
      const runId = Number(/^id +(\d+)$/m.exec(triggered.stdout)![1]);
      const second = json<{ run: { id: number; status: string } }>(await cli(['loops', 'trigger', 'nightly-triage', '--json']));
      expect(['pending', 'running', 'queued']).toContain(second.run.status);

      const runs = ok(await cli(['loops', 'runs', 'nightly-triage']));
      expect(runs.stdout.split('\n')[0]).toMatch(/^# +STATUS +TRIGGER +BY +POD +STARTED +SECONDS +ERROR$/);
      expect(runs.stdout).toMatch(/^1 +\S+ +manual /m);
      expect(ok(await cli(['loops', 'runs', 'nightly-triage', '--json'])).stdout).toBe(`${await raw('/loops/nightly-triage/runs')}\n`);
      // Runs are addressed by their number (# above), as they are titled.
      expect(ok(await cli(['loops', 'run', 'nightly-triage', '1'])).stdout).toMatch(new RegExp(`^id +${runId}$`, 'm'));
      expect(json<{ run: { id: number } }>(await cli(['loops', 'run', 'nightly-triage', '2', '--json'])).run.id).toBe(second.run.id);

      expect(ok(await cli(['loops', 'cancel', 'nightly-triage', '1'])).stdout).toBe('Run #1 cancelled.\n');
      expect(json<{ run: { status: string } }>(await cli(['loops', 'cancel', 'nightly-triage', '2', '--json'])).run.status).toBe('cancelled');
      expectApiError(await cli(['loops', 'cancel', 'nightly-triage', '1']), 'RUN_NOT_ACTIVE');
      // No run #9: found out by the CLI from the run list, so there is no request id to show.
      const absent = await cli(['loops', 'cancel', 'nightly-triage', '9']);
      expect(absent.code).toBe(1);
      expect(absent.stderr).toBe('drover: run #9 of loop nightly-triage not found\n  code: NOT_FOUND\n  status: 404\n  request_id: (none)\n');

      expect(ok(await cli(['loops', 'delete', 'nightly-triage'])).stdout).toBe('Loop nightly-triage deleted.\n');
      expect(json<{ message: string }>(await cli(['loops', 'delete', 'other', '--json'])).message).toBe('Loop other deleted.');
      expect(ok(await cli(['loops', 'list'])).stdout).toBe('No loops.\n');
    });

    it('trigger --wait exits 0 when the run completes and 4 when it fails, in both output modes', async () => {
      const both = ['--agent', 'shell', '--mode', 'direct', '--concurrency', 'queue', '--max-concurrent-runs', '2'];
      ok(await cli(['loops', 'create', '--name', 'Works', ...both, '--prompt-template', 'echo {{word}}', '--var', 'word=fine']));
      ok(await cli(['loops', 'create', '--name', 'Breaks', ...both, '--prompt-template', 'echo broken; exit 3']));
      const [works, worksJson, breaks, breaksJson] = await Promise.all([
        cli(['loops', 'trigger', 'works', '--wait']),
        cli(['loops', 'trigger', 'works', '--wait', '--json', '--var', 'word=again']),
        cli(['loops', 'trigger', 'breaks', '--wait']),
        cli(['loops', 'trigger', 'breaks', '--wait', '--json']),
      ]);
      expect(works.code, works.stderr).toBe(0);
      expect(works.stdout).toMatch(/^status +completed$/m);
      expect(works.stderr).toMatch(/^run #\d+ \w+; waiting for it to end$/m);
      expect(worksJson.code, worksJson.stderr).toBe(0);
      const run = (JSON.parse(worksJson.stdout) as { run: { id: number; status: string; resolved_prompt: string } }).run;
      expect(run).toMatchObject({ status: 'completed', resolved_prompt: 'echo again' });
      expect(worksJson.stdout).toBe(`${await raw(`/loops/works/runs/${run.id}`)}\n`);
      expect(breaks.code, breaks.stderr).toBe(4);
      expect(breaks.stdout).toMatch(/^status +failed$/m);
      expect(breaksJson.code).toBe(4);
      expect((JSON.parse(breaksJson.stdout) as { run: { status: string } }).run.status).toBe('failed');
      ok(await cli(['loops', 'delete', 'works']));
      ok(await cli(['loops', 'delete', 'breaks']));
    });
  });

  describe('channels', () => {
    it('create, list, get, update, post (an argument or stdin), messages', async () => {
      const notes = path.join(f.scratch, 'notes.md');
      fs.writeFileSync(notes, '# Context\nthe login bug\n');
      const created = ok(await cli(['channels', 'create', '--name', 'Bug triage', '--description', 'where we talk', '--document-file', notes]));
      const id = Number(/^id +(\d+)$/m.exec(created.stdout)![1]);
      expect(created.stdout).toContain('\n# Context\nthe login bug\n');
      const other = json<{ channel: { id: number; document: string | null } }>(await cli(['channels', 'create', '--name', 'random', '--json']));
      expect(other.channel.document).toBeNull();

      const list = ok(await cli(['channels', 'list']));
      expect(list.stdout.split('\n')[0]).toMatch(/^ID +NAME +ARCHIVED +TICKET +REPO +UPDATED +DESCRIPTION$/);
      expect(list.stdout).toMatch(new RegExp(`^${id} +Bug triage +no +- +- +\\S+ \\S+ +where we talk$`, 'm'));
      expect(ok(await cli(['channels', 'list', '--json'])).stdout).toBe(`${await raw('/channels')}\n`);
      expect(ok(await cli(['channels', 'get', String(id)])).stdout).toMatch(/^name +Bug triage$/m);
      expect(ok(await cli(['channels', 'get', String(id), '--json'])).stdout).toBe(`${await raw(`/channels/${id}`)}\n`);

      expect(ok(await cli(['channels', 'update', String(id), '--document', 'none', '--name', 'Bug triage 2'])).stdout).toMatch(/^name +Bug triage 2$/m);
      expect(json<{ channel: { archived: boolean } }>(await cli(['channels', 'update', String(other.channel.id), '--archive', '--json'])).channel.archived).toBe(true);
      expect(ok(await cli(['channels', 'list'])).stdout).not.toMatch(/random/);
      expect(ok(await cli(['channels', 'list', '--archived'])).stdout).toMatch(/random +yes/);

      expect(ok(await cli(['channels', 'post', String(id), 'first message'])).stdout).toMatch(/^#\d+ {2}\S+ \S+ {2}key \S.*: first message\n$/);
      const posted = json<{ message: { content: string; sender_type: string } }>(await cli(['channels', 'post', String(id), '-', '--json'], { input: 'from\nstdin' }));
      expect(posted.message).toMatchObject({ content: 'from\nstdin', sender_type: 'api' });
      expectApiError(await cli(['channels', 'post', String(other.channel.id), 'to the archive']), 'CHANNEL_ARCHIVED');

      const messages = ok(await cli(['channels', 'messages', String(id)])).stdout.trimEnd().split(/\n(?=#)/);
      expect(messages).toHaveLength(2);
      expect(messages[0]).toMatch(/ {2}key \S.*: first message$/);
      expect(messages[1]).toMatch(/ {2}key \S.*: from\n {4}stdin$/);
      expect(ok(await cli(['channels', 'messages', String(id), '--json', '--limit', '1'])).stdout).toBe(`${await raw(`/channels/${id}/messages?limit=1`)}\n`);
    });
  });

  describe('repositories', () => {
    it('list, get, branches (with the caller\'s token), mrs', async () => {
      const remote = path.join(f.scratch, 'remote.git');
      const work = path.join(f.scratch, 'work');
      const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });
      execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
      execFileSync('git', ['clone', '--quiet', remote, work]);
      git(work, 'commit', '--quiet', '--allow-empty', '-m', 'first');
      git(work, 'push', '--quiet', 'origin', 'HEAD:main', 'HEAD:feature/cli');
      const registered = await http(f.server.url, 'POST', '/api/v1/admin/orgs/default/repositories', { bearer: ADMIN_TOKEN, body: { name: 'web', full_name: 'acme/web', provider: 'git', url: remote } });
      expect(registered.status, registered.text).toBe(201);
      const id = (registered.body as { repository: { id: number } }).repository.id;

      const list = ok(await cli(['repos', 'list']));
      expect(list.stdout).toMatch(new RegExp(`^${id} +web +acme/web +git +main +${remote.replaceAll('/', '\\/')}$`, 'm'));
      expect(ok(await cli(['repos', 'list', '--json'])).stdout).toBe(`${await raw('/repositories')}\n`);
      expect(ok(await cli(['repos', 'get', String(id)])).stdout).toMatch(/^provider +git$/m);
      expect(ok(await cli(['repos', 'get', String(id), '--json'])).stdout).toBe(`${await raw(`/repositories/${id}`)}\n`);

      expect(ok(await cli(['repos', 'branches', String(id), '--access-token', 'unused-for-local-git'])).stdout).toBe('feature/cli\nmain\n');
      expect(json<{ branches: string[] }>(await cli(['repos', 'branches', String(id), '--json'], { env: { DROVER_GIT_ACCESS_TOKEN: 'tok' } })).branches).toEqual(['feature/cli', 'main']);
      const noToken = await cli(['repos', 'branches', String(id)]);
      expectApiError(noToken, 'VALIDATION_FAILED');
      expect(noToken.stderr).toContain('access_token');

      expect(ok(await cli(['repos', 'mrs', String(id), '--state', 'opened'])).stdout).toBe('No merge requests.\n');
      expect(json<{ merge_requests: unknown[] }>(await cli(['repos', 'mrs', String(id), '--json'])).merge_requests).toEqual([]);
    });
  });

  it('the client commands run from a bundle that imports none of the server (Fastify, Kysely, pino, the database drivers)', async () => {
    ok(await cli(['tickets', 'list']));
    const bundle = fs.readFileSync(path.join(REPO_ROOT, '.build', 'cli.mjs'), 'utf8');
    const imported = [...bundle.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(imported.filter((name) => !name.startsWith('node:'))).toEqual([]); // openapi-fetch and eventsource-parser are inlined
    expect(bundle).not.toMatch(/(from|import\(|require\()\s*["'](fastify|kysely|pino|pg|better-sqlite3|@fastify\/[a-z-]+)["']/);
  });
});
