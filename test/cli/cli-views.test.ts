/**
 * The CLI's rough edges from issue 26 (docs/cli.md), each against a real `drover serve` with its
 * local runner, as real `drover` child processes, on every database: the statuses the API takes
 * (`pods list --status queued`), "did you mean" for typos, `--profile` before the command,
 * `tickets create --repository` and `loops create --agentfile/--repository/--runner/--branch` by
 * name, `drover admin` on DROVER_API_URL with readable output, the message for another
 * organization's key, runs addressed by their number, terminal control sequences kept out of
 * readable output, and names instead of ids.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http, runDrover, startServerProcess, type CommandResult, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_cli_views_admin_token_0123456789abcdef';
const ORG = '/api/v1/ext/orgs/default';

function ok(result: CommandResult): CommandResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return result;
}

describe.each(DATABASES)('drover CLI views and rough edges (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;
  let scratch: string;
  let runner: { id: number; name: string };
  let repository: { id: number; name: string };
  /** `drover <args>` with the environment's connection (no profile unless --profile). */
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runDrover(args, {
      env: { HOME: path.join(scratch, 'home'), XDG_CONFIG_HOME: path.join(scratch, 'xdg'), DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key, ...env },
      cwd: scratch,
      timeoutMs: 60_000,
    });
  const api = async (method: string, urlPath: string, body?: unknown) => {
    const response = await http(server.url, method, urlPath, { key, body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body as Record<string, never>;
  };
  const admin = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `/api/v1/admin${urlPath}`, { bearer: ADMIN_TOKEN, body });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOCAL_RUNNER: 'true' }, localRunner: true });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-cli-views-'));
    fs.mkdirSync(path.join(scratch, 'home'));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { runners } = (await http(server.url, 'GET', `${ORG}/runners`, { key })).body as { runners: { id: number; name: string; status: string }[] };
      if (runners.some((r) => r.status === 'online')) {
        runner = runners.find((r) => r.status === 'online')!;
        break;
      }
      if (Date.now() > deadline) throw new Error('the local runner did not come online');
      await new Promise((r) => setTimeout(r, 200));
    }
    const created = await admin('POST', '/orgs/default/repositories', { name: 'web', full_name: 'acme/web', provider: 'git', url: 'https://git.example.invalid/acme/web.git', default_branch: 'main' });
    expect(created.status, created.text).toBe(201);
    repository = (created.body as { repository: { id: number; name: string } }).repository;
    // A second repository first in id order, so that an id shown where a name belongs is noticed.
    expect((await admin('POST', '/orgs/default/repositories', { name: 'api', full_name: 'acme/api', provider: 'git', url: 'https://git.example.invalid/acme/api.git' })).status).toBe(201);
  });

  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('pods list --status queued is accepted, as the API takes it (one list of statuses, src/protocol/enums.ts)', async () => {
    const result = ok(await cli(['pods', 'list', '--status', 'queued']));
    expect(result.stdout).toBe('No pods.\n');
    const refused = await cli(['pods', 'list', '--status', 'paused']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--status must be one of queued, initializing, running, completed, failed, terminated, orphaned');
  });

  it('a typo gets one line with the nearest command, exit 2, not the whole help', async () => {
    const cases: [string[], string][] = [
      [['tikets', 'list'], `drover: unknown command 'tikets'; did you mean 'tickets'?\nRun "drover --help" for the list of commands.\n`],
      [['pods', 'lsit'], `drover: unknown command 'pods lsit'; did you mean 'pods list'?\nRun "drover pods --help" for the list of commands.\n`],
      [['sreve'], `drover: unknown command 'sreve'; did you mean 'serve'?\nRun "drover --help" for the list of commands.\n`],
      [['admin', 'orgs', 'lst'], `drover: unknown command 'admin orgs lst'; did you mean 'admin orgs list'?\nRun "drover admin --help" for the list of commands.\n`],
      [['zzzzzz'], `drover: unknown command 'zzzzzz'\nRun "drover --help" for the list of commands.\n`],
    ];
    for (const [argv, expected] of cases) {
      const result = await cli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(expected);
    }
  });

  it('--profile (and --json) may come before the command', async () => {
    ok(await cli(['login', '--server', server.url, '--org', 'default', '--api-key', key, '--profile', 'work']));
    // The environment points elsewhere: only the named profile can make these succeed.
    const elsewhere = { DROVER_API_URL: 'http://127.0.0.1:9', DROVER_API_KEY: 'drv_wrong' };
    const before = ok(await cli(['--profile', 'work', 'tickets', 'list'], elsewhere));
    expect(before.stdout).toMatch(/^No tickets\.\n$|^SLUG /);
    const json = ok(await cli(['--json', '--profile=work', 'pods', 'list'], elsewhere));
    expect(JSON.parse(json.stdout)).toMatchObject({ pods: expect.any(Array) });
    const serverSide = await cli(['--profile', 'work', 'serve']);
    expect(serverSide.code).toBe(2);
    expect(serverSide.stderr).toBe(`drover: --profile and --json go with the API client commands, not 'serve'\n`);
  });

  it('tickets create --repository takes the repository by name or id; records show its name', async () => {
    const byName = ok(await cli(['tickets', 'create', '--type', 'task', '--title', 'Health check', '--repository', 'web']));
    expect(byName.stdout).toMatch(new RegExp(`^repository_id +web \\(${repository.id}\\)$`, 'm'));
    const slug = /^slug +(\S+)$/m.exec(byName.stdout)![1];
    expect((await api('GET', `${ORG}/tickets/${slug}`)).ticket).toMatchObject({ repository_id: repository.id });
    const byFullName = JSON.parse(ok(await cli(['tickets', 'create', '--type', 'bug', '--title', 'Other', '--repository', 'acme/web', '--json'])).stdout);
    expect(byFullName.ticket.repository_id).toBe(repository.id);
    const byId = JSON.parse(ok(await cli(['tickets', 'create', '--type', 'bug', '--title', 'Third', '--repository', String(repository.id), '--json'])).stdout);
    expect(byId.ticket.repository_id).toBe(repository.id);
    const listed = ok(await cli(['tickets', 'list', '--repository', 'web']));
    expect(listed.stdout.trim().split('\n')).toHaveLength(4);
    const unknown = await cli(['tickets', 'create', '--type', 'bug', '--title', 'x', '--repository', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--repository: no repository named "nope"');
  });

  it('loops create --agentfile --repository --runner --branch: by name, stored as given, shown by name', async () => {
    const file = path.join(scratch, 'loop.agentfile');
    fs.writeFileSync(file, 'ENV GREETING hello\n');
    const created = ok(
      await cli(['loops', 'create', '--name', 'Lint', '--agent', 'shell', '--prompt-template', 'echo $GREETING', '--agentfile', file, '--repository', 'web', '--runner', runner.name, '--branch', 'main']),
    );
    expect(created.stdout).toMatch(new RegExp(`^repository_id +web \\(${repository.id}\\)$`, 'm'));
    expect(created.stdout).toMatch(new RegExp(`^runner_id +${runner.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(${runner.id}\\)$`, 'm'));
    const { loop } = await api('GET', `${ORG}/loops/lint`);
    expect(loop).toMatchObject({ agentfile_layer: 'ENV GREETING hello\n', repository_id: repository.id, runner_id: runner.id, branch_name: 'main' });
    const cleared = JSON.parse(ok(await cli(['loops', 'update', 'lint', '--agentfile', 'none', '--runner', 'none', '--json'])).stdout);
    expect(cleared.loop).toMatchObject({ agentfile_layer: null, runner_id: null, repository_id: repository.id });
    const missing = await cli(['loops', 'create', '--name', 'x', '--prompt-template', 'x', '--agentfile', path.join(scratch, 'absent')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--agentfile: ENOENT/);
  });

  it('drover admin honours DROVER_API_URL and prints tables and records; --json the API JSON', async () => {
    const env = { DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SERVER_URL: '' };
    const table = ok(await cli(['admin', 'orgs', 'list'], env));
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +SLUG +NAME +TICKET_PREFIX +(NETWORK_ALLOW +)?CREATED_AT/);
    expect(table.stdout).toMatch(/^1 +default /m);
    const json = JSON.parse(ok(await cli(['admin', 'orgs', 'list', '--json'], env)).stdout);
    expect(json.orgs[0]).toMatchObject({ slug: 'default' });
    const user = ok(await cli(['admin', 'users', 'create', '--org', 'default', '--name', 'Ada Lovelace', '--email', 'ada@example.com'], env));
    expect(user.stdout).toMatch(/^name +Ada Lovelace$/m);
    expect(user.stdout).toMatch(/^email +ada@example\.com$/m);
    const refused = await cli(['admin', 'users', 'delete', '--org', 'default', '--id', '999'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^drover admin: .*not found\n {2}code: NOT_FOUND\n {2}status: 404\n {2}request_id: req_[0-9a-f]{32}\n$/);
  });

  it("another organization's key: the message says the key belongs to another organization, naming neither", async () => {
    expect((await admin('POST', '/orgs', { slug: 'other', name: 'Other' })).status).toBe(201);
    for (const org of ['other', 'no-such-org']) {
      const result = await cli(['tickets', 'list'], { DROVER_ORG: org });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^drover: organization not found: this API key belongs to another organization\n {2}code: NOT_FOUND\n/);
      expect(result.stderr).not.toContain('default');
    }
  });

  it('loops run and cancel address a run by its number, the one it is titled with', async () => {
    const create = (slug: string) => cli(['loops', 'create', '--name', slug, '--slug', slug, '--agent', 'shell', '--prompt-template', 'sleep 60', '--concurrency', 'queue', '--max-concurrent-runs', '2']);
    ok(await create('first'));
    ok(await create('second'));
    const runOf = async (slug: string) => JSON.parse(ok(await cli(['loops', 'trigger', slug, '--json'])).stdout).run as { id: number; run_number: number };
    const a = await runOf('first');
    const b1 = await runOf('second');
    const b2 = await runOf('second');
    expect([b1.run_number, b2.run_number]).toEqual([1, 2]);
    expect(b1.id).not.toBe(1); // run #1 of "second" is not the run with id 1
    const shown = ok(await cli(['loops', 'run', 'second', '1']));
    expect(shown.stdout).toMatch(new RegExp(`^id +${b1.id}$`, 'm'));
    expect(ok(await cli(['loops', 'cancel', 'second', '1'])).stdout).toBe('Run #1 cancelled.\n');
    const status = async (slug: string, id: number) => ((await api('GET', `${ORG}/loops/${slug}/runs/${id}`)).run as { status: string }).status;
    expect(await status('second', b1.id)).toBe('cancelled');
    expect(await status('second', b2.id)).not.toBe('cancelled');
    expect(await status('first', a.id)).not.toBe('cancelled');
    expect(ok(await cli(['loops', 'cancel', 'second', '#2'])).stdout).toBe('Run #2 cancelled.\n');
    ok(await cli(['loops', 'cancel', 'first', '1']));
    const absent = await cli(['loops', 'run', 'second', '7']);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toMatch(/^drover: run #7 of loop second not found\n {2}code: NOT_FOUND\n/);
    const runs = ok(await cli(['loops', 'runs', 'second']));
    expect(runs.stdout.split('\n')[0]).toMatch(/^# +STATUS /);
    expect(runs.stdout).toMatch(/^2 +cancelled +manual /m);
  });

  it('text agents wrote is printed without terminal control sequences unless --raw (messages, tickets, pods)', async () => {
    const hostile = 'hello \u001b]0;pwned\u0007\u001b[31mred\u001b[0m \u009b2J done';
    const { channel } = await api('POST', `${ORG}/channels`, { name: 'escapes' });
    const channelId = (channel as { id: number }).id;
    await api('POST', `${ORG}/channels/${channelId}/messages`, { content: hostile });
    const messages = ok(await cli(['channels', 'messages', String(channelId)]));
    expect(messages.stdout).toContain('hello red  done');
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    expect(messages.stdout).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(ok(await cli(['channels', 'messages', String(channelId), '--raw'])).stdout).toContain(hostile);
    const json = ok(await cli(['channels', 'messages', String(channelId), '--json']));
    expect(json.stdout).not.toMatch(/[\u009b]/);
    expect(JSON.parse(json.stdout).messages[0].content).toBe(hostile);

    const { ticket } = await api('POST', `${ORG}/tickets`, { type: 'bug', title: 'escapes', description: hostile });
    const shown = ok(await cli(['tickets', 'get', (ticket as { slug: string }).slug]));
    expect(shown.stdout).toMatch(/^description +hello red {2}done$/m);

    const pod = ok(await cli(['pods', 'run', '--agent', 'shell', '--runner', runner.name, '--prompt', `printf '\\033]0;pwned\\007visible\\n'`, '--follow']));
    expect(pod.stdout).toBe('visible\n');
    const podKey = /^pod (p-\S+) completed/m.exec(pod.stderr)![1];
    const record = ok(await cli(['pods', 'get', podKey]));
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    expect(record.stdout).not.toMatch(/[\u001b\u0007]/);
    expect(record.stdout).toMatch(new RegExp(`^runner_id +.+ \\(${runner.id}\\)$`, 'm'));
  });

  it('runners and repositories are shown by name where the API answers ids', async () => {
    const list = ok(await cli(['pods', 'list']));
    const header = list.stdout.split('\n')[0];
    const runnerColumn = header.indexOf('RUNNER');
    const row = list.stdout.split('\n')[1];
    expect(row.slice(runnerColumn).startsWith(runner.name)).toBe(true);
    await api('POST', `${ORG}/channels`, { name: 'web-talk', repository_id: repository.id });
    const channels = ok(await cli(['channels', 'list', '--repository', 'web']));
    expect(channels.stdout).toMatch(/^\d+ +web-talk +no +- +web /m);
  });
});
