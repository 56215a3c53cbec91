/**
 * People, presets and placement from the command line (docs/cli.md "People and activity"), as
 * real `drover` child processes against a real `drover serve` with its local runner, on every
 * database: keys of people (`admin api-keys create --user`, `whoami`), names instead of ids
 * (assignees, who created and changed a ticket, who started a pod or a run, who wrote a message),
 * `activity`, `admin presets` and `--preset`, `--labels`, and the filters of `pods list`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { bareRepository } from '../helpers/git-fixture.ts';
import { createProcessTestDatabase, http, runDrover, startServerProcess, type CommandResult, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_people_cli_admin_token_0123456789abcdef';
const ORG = '/api/v1/ext/orgs/default';
const ALL_SCOPES = 'tickets:read,tickets:write,channels:read,channels:write,pods:read,pods:write,loops:read,loops:write,runners:read,repos:read';

function ok(result: CommandResult): CommandResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return result;
}

/** The value of `key` in a `key: value` record. */
function field(stdout: string, key: string): string | undefined {
  return new RegExp(`^${key} +(.*)$`, 'm').exec(stdout)?.[1];
}

/** The rows of a table as header → cell (cells hold no two spaces in a row). */
function rows(stdout: string): Record<string, string>[] {
  const [header, ...lines] = stdout.trimEnd().split('\n');
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => [m[0], m.index] as const);
  return lines
    .filter((line) => !line.startsWith('('))
    .map((line) => Object.fromEntries(starts.map(([name, at], i) => [name, line.slice(at, i + 1 < starts.length ? starts[i + 1][1] : undefined).trim()])));
}

describe.each(DATABASES)('drover: people, presets and placement (%s)', { timeout: 300_000 }, (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let bootstrapKey: string;
  let scratch: string;
  const people: Record<'ann' | 'bob', { id: number; key: string }> = { ann: { id: 0, key: '' }, bob: { id: 0, key: '' } };

  /** `drover <args>` with `key` (default: Ann's) in the environment. */
  const cli = (args: string[], key = people.ann.key, input?: string) =>
    runDrover(args, {
      env: { HOME: path.join(scratch, 'home'), XDG_CONFIG_HOME: path.join(scratch, 'xdg'), DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key, DROVER_ADMIN_TOKEN: ADMIN_TOKEN },
      cwd: scratch,
      timeoutMs: 60_000,
      input,
    });
  const api = async (method: string, urlPath: string, body?: unknown) => {
    const response = await http(server.url, method, urlPath, { key: bootstrapKey, body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body as Record<string, never>;
  };

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOCAL_RUNNER: 'true' }, localRunner: true, timeoutMs: 90_000 });
    bootstrapKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-people-cli-'));
    fs.mkdirSync(path.join(scratch, 'home'));
    const deadline = Date.now() + 60_000;
    while (!((await api('GET', `${ORG}/runners`)).runners as { status: string }[]).some((r) => r.status === 'online')) {
      if (Date.now() > deadline) throw new Error('the local runner did not come online');
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('admin api-keys create --user makes a key of that person; whoami names them; a key of no one says so', async () => {
    for (const [who, name] of [['ann', 'Ann'], ['bob', 'Bob']] as const) {
      const user = JSON.parse(ok(await cli(['admin', 'users', 'create', '--org', 'default', '--name', name, '--email', `${who}@example.com`, '--json'])).stdout);
      people[who].id = user.user.id;
      const created = ok(await cli(['admin', 'api-keys', 'create', '--org', 'default', '--name', `${name}'s laptop`, '--scopes', ALL_SCOPES, '--user', String(user.user.id)]));
      people[who].key = /\b(drv_\S+)/.exec(created.stdout)![1];
      expect(field(created.stdout, 'user_id')).toBe(String(user.user.id));
    }
    const ann = ok(await cli(['whoami']));
    expect(field(ann.stdout, 'user')).toBe(`Ann (${people.ann.id})`);
    expect(field(ann.stdout, 'type')).toBe('api_key');
    expect(field(ann.stdout, 'scopes')).toContain('tickets:write');
    expect(JSON.parse(ok(await cli(['whoami', '--json'], people.bob.key)).stdout).principal.user).toEqual({ id: people.bob.id, name: 'Bob' });
    expect(field(ok(await cli(['whoami'], bootstrapKey)).stdout, 'user')).toBe('- (a key of no one)');
    expect(rows(ok(await cli(['users', 'list'])).stdout)).toEqual([
      { ID: String(people.ann.id), NAME: 'Ann' },
      { ID: String(people.bob.id), NAME: 'Bob' },
    ]);
    // Bad --user values: the API's message, exit 1, and no key.
    const before = ((await http(server.url, 'GET', '/api/v1/admin/orgs/default/api-keys', { bearer: ADMIN_TOKEN })).body as { api_keys: unknown[] }).api_keys.length;
    for (const user of ['abc', '999999']) {
      const refused = await cli(['admin', 'api-keys', 'create', '--org', 'default', '--name', 'x', '--scopes', 'tickets:read', '--user', user]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toMatch(/user_id/);
      expect(refused.stdout).toBe('');
    }
    expect(((await http(server.url, 'GET', '/api/v1/admin/orgs/default/api-keys', { bearer: ADMIN_TOKEN })).body as { api_keys: unknown[] }).api_keys).toHaveLength(before);
  });

  it('tickets show the assignee, who created and who changed them by name; --assignee takes a name', async () => {
    const created = ok(await cli(['tickets', 'create', '--type', 'task', '--title', 'Rotate the keys', '--assignee', 'Bob']));
    const slug = field(created.stdout, 'slug')!;
    expect(field(created.stdout, 'assignee_id')).toBe(`Bob (${people.bob.id})`);
    expect(field(created.stdout, 'created_by')).toBe(`Ann (user ${people.ann.id})`);
    const updated = ok(await cli(['tickets', 'update', slug, '--priority', 'high', '--assignee', 'Ann'], people.bob.key));
    expect(field(updated.stdout, 'assignee_id')).toBe(`Ann (${people.ann.id})`);
    expect(field(updated.stdout, 'updated_by')).toBe(`Bob (user ${people.bob.id})`);
    expect(field(ok(await cli(['tickets', 'get', slug])).stdout, 'created_by')).toBe(`Ann (user ${people.ann.id})`);
    const listed = rows(ok(await cli(['tickets', 'list', '--assignee', 'Ann'])).stdout);
    expect(listed.map((r) => [r.SLUG, r.ASSIGNEE])).toEqual([[slug, 'Ann']]);
    expect(JSON.parse(ok(await cli(['tickets', 'list', '--assignee', String(people.bob.id), '--json'])).stdout).tickets).toEqual([]);
    const cleared = ok(await cli(['tickets', 'update', slug, '--assignee', 'none']));
    expect(field(cleared.stdout, 'assignee_id')).toBe('-');
    const unknown = await cli(['tickets', 'create', '--type', 'task', '--title', 'x', '--assignee', 'Nobody']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--assignee: no user named "Nobody" (drover users list)');
  });

  it("messages show who wrote them; activity pages the log with who made each change", async () => {
    const channel = JSON.parse(ok(await cli(['channels', 'create', '--name', 'people-cli', '--json'])).stdout).channel;
    ok(await cli(['channels', 'post', String(channel.id), 'hello from Ann']));
    ok(await cli(['channels', 'post', String(channel.id), 'and from a key of no one'], bootstrapKey));
    const messages = ok(await cli(['channels', 'messages', String(channel.id)])).stdout;
    expect(messages).toMatch(/^#\d+ +\S+ \S+ +Ann: hello from Ann$/m);
    expect(messages).toMatch(/^#\d+ +\S+ \S+ +key \S.*: and from a key of no one$/m);

    const activity = rows(ok(await cli(['activity', '--types', 'ticket.created', '--actor-type', 'user'])).stdout);
    expect(activity.length).toBeGreaterThan(0);
    expect(activity[0]).toMatchObject({ TYPE: 'ticket.created', BY: 'Ann' });
    expect(activity[0].WHAT).toContain('Rotate the keys');
    const byBob = rows(ok(await cli(['activity', '--types', 'ticket.*', '--actor-type', 'user'], people.bob.key)).stdout);
    expect(byBob.map((r) => r.BY)).toContain('Bob');
    // Paging: one event a page, the cursor printed under it leads to the next, older one.
    const first = ok(await cli(['activity', '--limit', '1']));
    const cursor = /^\(more: --cursor (\d+)\)$/m.exec(first.stdout)![1];
    const second = rows(ok(await cli(['activity', '--limit', '1', '--cursor', cursor])).stdout);
    expect(Number(second[0].ID)).toBeLessThan(Number(rows(first.stdout)[0].ID));
    const json = JSON.parse(ok(await cli(['activity', '--types', 'message.created', '--json'])).stdout);
    expect(json.events[0].actor).toEqual({ type: 'api_key', id: expect.any(Number), name: expect.any(String) });
    expect(json.events[1].actor).toEqual({ type: 'user', id: people.ann.id, name: 'Ann' });
    expect(rows(ok(await cli(['activity', '--from', '2999-01-01'])).stdout)).toEqual([]);
    for (const [args, message] of [
      [['--actor-type', 'robot'], '--actor-type must be one of user, api_key, pod, loop, admin, system, got "robot"'],
      [['--from', 'yesterday'], '--from must be an ISO 8601 time'],
      [['--cursor', 'abc'], '--cursor must be the number a previous page printed'],
      [['--limit', '0'], '--limit must be an integer of at least 1'],
    ] as const) {
      const refused = await cli(['activity', ...args]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(message);
    }
    const tooMany = await cli(['activity', '--limit', '501']);
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toMatch(/limit/);
  });

  it('admin presets create, list, get, update, delete; presets list for the org', async () => {
    const layer = path.join(scratch, 'team.agentfile');
    fs.writeFileSync(layer, 'ENV TEAM "drover"\nENV LEVEL "preset"\nCONFIG max_turns = 5\n');
    const created = ok(await cli(['admin', 'presets', 'create', '--org', 'default', '--name', 'team', '--agent', 'shell', '--layer-file', layer, '--description', 'the team shell']));
    expect(field(created.stdout, 'name')).toBe('team');
    expect(field(created.stdout, 'agent_slug')).toBe('shell');
    ok(await cli(['admin', 'presets', 'create', '--org', 'default', '--name', 'scratch', '--agent', 'shell', '--layer', 'ENV A "1"']));
    const listed = rows(ok(await cli(['admin', 'presets', 'list', '--org', 'default'])).stdout);
    expect(listed.map((r) => r.NAME ?? r.name).sort()).toEqual(['scratch', 'team']);
    const got = JSON.parse(ok(await cli(['admin', 'presets', 'get', '--org', 'default', '--name', 'team', '--json'])).stdout);
    expect(got.preset).toMatchObject({ name: 'team', agent_slug: 'shell', description: 'the team shell', agentfile_layer: expect.stringContaining('ENV TEAM "drover"') });
    const updated = JSON.parse(ok(await cli(['admin', 'presets', 'update', '--org', 'default', '--name', 'scratch', '--description', 'to go', '--json'])).stdout);
    expect(updated.preset).toMatchObject({ name: 'scratch', description: 'to go' });
    ok(await cli(['admin', 'presets', 'delete', '--org', 'default', '--name', 'scratch']));
    const gone = await cli(['admin', 'presets', 'get', '--org', 'default', '--name', 'scratch']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/404/);
    // Any key of the org sees the presets (no agentfile secrets are in them: CREDENTIAL names a credential).
    const org = rows(ok(await cli(['presets', 'list'], people.bob.key)).stdout);
    expect(org.map((r) => [r.NAME, r.AGENT])).toEqual([['team', 'shell']]);
    // Bad input: a missing flag (2), a line a preset may not hold (the API's 400: 1), a missing file (1).
    const missing = await cli(['admin', 'presets', 'create', '--org', 'default', '--name', 'x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --agent');
    const prompt = await cli(['admin', 'presets', 'create', '--org', 'default', '--name', 'x', '--agent', 'shell', '--layer', 'PROMPT "no"']);
    expect(prompt.code).toBe(1);
    expect(prompt.stderr).toMatch(/PROMPT/);
    const noFile = await cli(['admin', 'presets', 'create', '--org', 'default', '--name', 'x', '--agent', 'shell', '--layer-file', path.join(scratch, 'absent')]);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toMatch(/ENOENT/);
    const none = await cli(['admin', 'presets', 'delete', '--org', 'default', '--name', 'absent']);
    expect(none.code).toBe(1);
  });

  it('pods run --preset --labels: the preset\'s lines with the pod\'s on top, on a runner with the labels; pods show who started them', async () => {
    const own = path.join(scratch, 'own.agentfile');
    fs.writeFileSync(own, 'ENV LEVEL "pod"\n');
    const run = await cli(['pods', 'run', '--preset', 'team', '--labels', 'local', '--agentfile', own, '--prompt', 'echo "team=$TEAM level=$LEVEL"', '--follow']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('team=drover level=pod');
    const key = /^pod (p-\S+) /m.exec(run.stderr)![1];
    const shown = ok(await cli(['pods', 'get', key])).stdout;
    expect(field(shown, 'preset')).toBe('team');
    expect(field(shown, 'runner_labels')).toBe('local');
    expect(field(shown, 'max_turns')).toBe('5');
    expect(field(shown, 'created_by')).toBe(`Ann (user ${people.ann.id})`);
    expect(field(shown, 'runner_id')).toMatch(/^local \(\d+\)$/);
    const listed = rows(ok(await cli(['pods', 'list'])).stdout);
    expect(listed.find((r) => r.KEY === key)).toMatchObject({ BY: 'Ann', RUNNER: 'local', AGENT: 'shell' });
    // No runner carries the label: the API's 503 naming it, exit 1, no pod.
    const total = JSON.parse(ok(await cli(['pods', 'list', '--json'])).stdout).total;
    const nowhere = await cli(['pods', 'run', '--agent', 'shell', '--labels', 'gpu', '--prompt', 'true']);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/gpu/);
    expect(nowhere.stderr).toMatch(/status: 503/);
    const unknown = await cli(['pods', 'run', '--preset', 'nope', '--prompt', 'true']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/status: 400/);
    const both = await cli(['pods', 'run', '--preset', 'team', '--agent', 'shell', '--prompt', 'true']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give --agent or --preset, not both');
    const neither = await cli(['pods', 'run', '--prompt', 'true']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('--agent or --preset is required');
    expect(JSON.parse(ok(await cli(['pods', 'list', '--json'])).stdout).total).toBe(total);
  });

  it('loops create --preset --labels; runs show who triggered them', async () => {
    const created = ok(await cli(['loops', 'create', '--name', 'Team loop', '--slug', 'team-loop', '--preset', 'team', '--labels', 'local', '--mode', 'direct', '--prompt-template', 'echo "team=$TEAM"']));
    expect(field(created.stdout, 'preset')).toBe('team');
    expect(field(created.stdout, 'agent_slug')).toBe('shell');
    expect(field(created.stdout, 'runner_labels')).toBe('local');
    const triggered = await cli(['loops', 'trigger', 'team-loop', '--wait'], people.bob.key);
    expect(triggered.code, triggered.stderr).toBe(0);
    const runs = rows(ok(await cli(['loops', 'runs', 'team-loop'])).stdout);
    expect(runs[0]).toMatchObject({ '#': '1', STATUS: 'completed', TRIGGER: 'manual', BY: 'Bob' });
    const run = ok(await cli(['loops', 'run', 'team-loop', '1'])).stdout;
    expect(field(run, 'triggered_by')).toBe(`Bob (user ${people.bob.id})`);
    const pod = ok(await cli(['pods', 'get', field(run, 'pod_key')!])).stdout;
    expect(field(pod, 'preset')).toBe('team');
    expect(field(pod, 'created_by')).toMatch(/^(Bob \(user \d+\)|loop team-loop: .*)$/);
    const output = ok(await cli(['pods', 'logs', field(run, 'pod_key')!])).stdout;
    expect(output).toContain('team=drover');
    const refused = await cli(['loops', 'create', '--name', 'x', '--preset', 'team', '--agent', 'shell', '--prompt-template', 'x']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/status: 400/);
  });

  it('pods list filters by ticket, repository, agent, runner and creation time, by name where there is one', async () => {
    const { bare } = bareRepository(scratch, 'web', { 'README.md': 'web\n' });
    ok(await cli(['admin', 'repositories', 'create', '--org', 'default', '--name', 'web', '--full-name', 'acme/web', '--provider', 'git', '--url', bare]));
    const ticket = field(ok(await cli(['tickets', 'create', '--type', 'task', '--title', 'Filter me'])).stdout, 'slug')!;
    const start = new Date(Date.now() - 1000).toISOString();
    const ofTicket = await cli(['pods', 'run', '--agent', 'shell', '--ticket', ticket, '--prompt', 'true', '--follow']);
    expect(ofTicket.code, ofTicket.stderr).toBe(0);
    const ticketPod = /^pod (p-\S+) /m.exec(ofTicket.stderr)![1];
    const ofRepository = await cli(['pods', 'run', '--agent', 'shell', '--repository', 'acme/web', '--prompt', 'test -f README.md', '--follow']);
    expect(ofRepository.code, ofRepository.stderr).toBe(0);
    const repositoryPod = /^pod (p-\S+) /m.exec(ofRepository.stderr)![1];
    const keys = async (...args: string[]) => (JSON.parse(ok(await cli(['pods', 'list', ...args, '--json'])).stdout).pods as { key: string }[]).map((p) => p.key).sort();
    const all = await keys('--limit', '100');
    expect(all.length).toBeGreaterThan(2);
    expect(await keys('--ticket', ticket)).toEqual([ticketPod]);
    expect(await keys('--repository', 'web')).toEqual([repositoryPod]);
    expect(await keys('--since', start)).toEqual([ticketPod, repositoryPod].sort());
    expect(await keys('--since', '2999-01-01')).toEqual([]);
    expect(await keys('--agent', 'shell', '--limit', '100')).toEqual(all);
    expect(await keys('--agent', 'codex')).toEqual([]);
    expect(await keys('--runner', 'local', '--limit', '100')).toEqual(all);
    const readable = rows(ok(await cli(['pods', 'list', '--repository', 'web'])).stdout);
    expect(readable.map((r) => r.KEY)).toEqual([repositoryPod]);
    for (const [args, message] of [
      [['--repository', 'nowhere'], '--repository: no repository named "nowhere"'],
      [['--runner', 'nowhere'], '--runner: no runner named "nowhere"'],
      [['--since', 'last week'], '--since must be an ISO 8601 time'],
      [['--status', 'paused'], '--status must be one of'],
    ] as const) {
      const refused = await cli(['pods', 'list', ...args]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(message);
    }
  });
});
