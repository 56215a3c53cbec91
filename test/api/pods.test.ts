/**
 * The pod endpoints (docs/api.md "Pods"): create with and without an
 * agentfile_layer, detail, list, terminate, output, placement on runners, idempotent creates,
 * and the pod token (the agent's own key). No runner process runs here: runners are rows
 * inserted through the store, so every pod stays `initializing` until a test moves it.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { appendOutputChunk } from '../../src/store/pod-output.ts';
import type { PodStatus, RunnersTable } from '../../src/store/schema-runners.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';
import { insertRunner as insertRunnerRow, type RunnerOverrides } from '../helpers/runners.ts';
import { waitFor } from '../helpers/runner-process.ts';

interface PodDetail {
  key: string;
  status: PodStatus;
  agent_slug: string;
  runner_id: number | null;
  queue_position: number | null;
  prompt: string;
  repository_id: number | null;
  branch: string | null;
  ticket_slug: string | null;
  channel_id: number | null;
  sandbox_type: string | null;
  auto_close: boolean;
  pod_timeout_minutes: number | null;
  max_turns: number | null;
  mode: 'direct' | 'autopilot';
  alias: string | null;
  error_message: string | null;
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const POD_KEY = /^[a-z0-9-]{1,64}$/;
const LIST_KEYS = ['agent_slug', 'branch', 'created_at', 'created_by', 'key', 'prompt', 'queue_position', 'repository_id', 'result', 'runner_id', 'session_id', 'status', 'updated_at', 'usage'].sort();
const DETAIL_KEYS = [
  ...LIST_KEYS,
  'preset',
  'runner_labels',
  'alias',
  'auto_close',
  'channel_id',
  'delivery',
  'env',
  'error_message',
  'exit_code',
  'finished_at',
  'limits',
  'max_cost_usd',
  'max_turns',
  'mode',
  'network',
  'parent_pod_key',
  'pod_timeout_minutes',
  'sandbox_type',
  'started_at',
  'ticket_slug',
].sort();

/** 400 VALIDATION_FAILED whose details name the body field `/field` (or the bare name, leniently: see the ticket tests). */
function expectInvalid(res: LightMyRequestResponse, field: string): ErrorBodyJson {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  expect(body.details!.map((d) => d.field.replace(/^\//, '')), JSON.stringify(body)).toContain(field);
  return body;
}

/** A runner row as a connected runner would leave it (online, heartbeat now), with two labels and room for 100 pods. */
function insertRunner(t: TestApp, orgId: number, overrides: RunnerOverrides = {}): Promise<number> {
  return insertRunnerRow(t.store, orgId, { labels: '["gpu","eu"]', max_pods: 100, ...overrides });
}

describe.each(DATABASES)('pods API on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;
  let other: OrgRow;
  let otherKey: string;
  let otherRunnerId: number;

  const create = (payload: Record<string, unknown>, options: { key?: string; org?: string; headers?: Record<string, string> } = {}) =>
    t.request({ method: 'POST', url: t.path('/pods', options.org), key: options.key, headers: options.headers, payload });

  const createOk = async (payload: Record<string, unknown>, options: { key?: string; org?: string } = {}): Promise<string> => {
    const res = await create(payload, options);
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { pod: { pod_key: string } }).pod.pod_key;
  };

  /** The pod of a 201 answer to POST /pods. */
  const created = async (res: LightMyRequestResponse): Promise<{ pod_key: string; status: string; agent_slug: string }> => {
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { pod: { pod_key: string; status: string; agent_slug: string } }).pod;
  };

  const detail = async (key: string, org?: string, apiKey?: string): Promise<PodDetail> => {
    const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}`, org), key: apiKey });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { pod: PodDetail }).pod;
  };

  const podRow = async (key: string) => t.store.db.selectFrom('pods').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
  const podCount = async () => Number((await t.store.db.selectFrom('pods').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const setStatus = async (key: string, status: PodStatus) => {
    await t.store.db.updateTable('pods').set({ status }).where('key', '=', key).execute();
  };

  const admin = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    t.request({ method, url: `/api/v1/admin${url}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });

  /** A separate organization, for tests whose outcome depends on every runner of the org. */
  let orgSeq = 0;
  const freshOrg = async () => {
    orgSeq += 1;
    const org = await t.createOrg(`place-${orgSeq}`);
    const { key } = await t.issueKey(SCOPES, { org });
    return { org, key, slug: org.slug };
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t, t.org.id, { max_pods: 1000 });
    other = await t.createOrg('globex');
    otherKey = (await t.issueKey(SCOPES, { org: other })).key;
    otherRunnerId = await insertRunner(t, other.id);
  });

  afterAll(async () => {
    await t?.close();
  });

  // Runners go stale 30 s after their last heartbeat; no runner process beats here, so every test starts with fresh
  // heartbeats (a slow database must not turn the fixtures stale). Tests that want a stale runner make it in the test.
  beforeEach(async () => {
    await t.store.db.updateTable('runners').set({ last_heartbeat_at: Date.now() }).where('last_heartbeat_at', 'is not', null).execute();
  });

  describe('POST /pods', () => {
    it('→ 201 {pod: {pod_key, status: initializing, agent_slug, created_at}} and nothing more', async () => {
      const before = Date.now();
      const res = await create({ agent_slug: 'shell', agentfile_layer: 'PROMPT "echo hi"' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json\b/);
      const body = res.json() as { pod: { pod_key: string; status: string; agent_slug: string; created_at: string } };
      expect(Object.keys(body)).toEqual(['pod']);
      expect(Object.keys(body.pod).sort()).toEqual(['agent_slug', 'created_at', 'pod_key', 'status']);
      expect(body.pod.pod_key).toMatch(POD_KEY);
      expect(body.pod).toMatchObject({ status: 'initializing', agent_slug: 'shell' });
      expect(body.pod.created_at).toMatch(ISO_MS);
      expect(Date.parse(body.pod.created_at)).toBeGreaterThanOrEqual(before - 1);
      expect(Date.parse(body.pod.created_at)).toBeLessThanOrEqual(Date.now() + 1);
      const row = await podRow(body.pod.pod_key);
      expect(row).toMatchObject({ org_id: t.org.id, runner_id: runnerId, status: 'initializing', desired_state: 'run', prompt: 'echo hi' });
      const shown = await detail(body.pod.pod_key);
      expect(shown.created_at).toBe(body.pod.created_at);
      expect(shown.key).toBe(body.pod.pod_key);
    });

    it('gives every pod its own key', async () => {
      const keys = new Set<string>();
      for (let i = 0; i < 10; i++) keys.add(await createOk({ agent_slug: 'shell' }));
      expect(keys.size).toBe(10);
      for (const key of keys) expect(key).toMatch(POD_KEY);
    });

    it('accepts an alias of up to 100 characters; 101 → 400', async () => {
      const key = await createOk({ agent_slug: 'shell', alias: 'a'.repeat(100) });
      expect((await detail(key)).alias).toBe('a'.repeat(100));
      const emoji = await createOk({ agent_slug: 'shell', alias: '🐄'.repeat(100) });
      expect((await detail(emoji)).alias).toBe('🐄'.repeat(100));
      const count = await podCount();
      expectInvalid(await create({ agent_slug: 'shell', alias: 'a'.repeat(101) }), 'alias');
      expect(await podCount()).toBe(count);
    });
  });

  describe('GET /pods/:key', () => {
    it('shows every field of the spec plus error_message, exit_code, started_at, finished_at, mode, alias; null where unset', async () => {
      const key = await createOk({ agent_slug: 'claude-code' });
      const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}`) });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { pod: PodDetail };
      expect(Object.keys(body)).toEqual(['pod']);
      expect(Object.keys(body.pod).sort()).toEqual(DETAIL_KEYS);
      expect(body.pod).toEqual({
        key,
        status: 'initializing',
        agent_slug: 'claude-code',
        runner_id: runnerId,
        prompt: '',
        repository_id: null,
        branch: null,
        ticket_slug: null,
        channel_id: null,
        sandbox_type: null,
        auto_close: true,
        pod_timeout_minutes: null,
        max_turns: null,
        max_cost_usd: null,
        mode: 'direct',
        alias: null,
        parent_pod_key: null,
        env: {},
        runner_labels: [],
        preset: null,
        created_by: { type: 'api_key', id: expect.any(Number), name: 'test' },
        error_message: null,
        exit_code: null,
        result: null,
        session_id: null,
        usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null, turns: null },
        queue_position: null,
        started_at: null,
        finished_at: null,
        delivery: null,
        limits: { memory_mb: null, pids: null, cpus: null, disk_mb: null },
        network: { mode: 'restricted', allow: [], refused: 0 },
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(Number.isInteger(body.pod.runner_id)).toBe(true);
      expect(body.pod.updated_at).toBe(body.pod.created_at);
    });

    it('shows what the runner reported: started_at, exit_code, error_message, finished_at', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const started = Date.parse('2026-05-01T10:00:00.000Z');
      await t.store.db
        .updateTable('pods')
        .set({ status: 'failed', started_at: started, finished_at: started + 1500, exit_code: 2, error_message: 'agent exited with code 2', updated_at: started + 1500 })
        .where('key', '=', key)
        .execute();
      expect(await detail(key)).toMatchObject({
        status: 'failed',
        started_at: '2026-05-01T10:00:00.000Z',
        finished_at: '2026-05-01T10:00:01.500Z',
        updated_at: '2026-05-01T10:00:01.500Z',
        exit_code: 2,
        error_message: 'agent exited with code 2',
      });
    });

    it('an unknown key → 404 NOT_FOUND', async () => {
      expectError(await t.request({ method: 'GET', url: t.path('/pods/p-doesnotexist00') }), 404, 'NOT_FOUND');
    });
  });

  describe('GET /pods', () => {
    let org: Awaited<ReturnType<typeof freshOrg>>;
    const keys: string[] = [];
    const list = async (query = '') => {
      const res = await t.request({ method: 'GET', url: t.path(`/pods${query}`, org.slug), key: org.key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { pods: (Omit<PodDetail, 'ticket_slug'> & Record<string, unknown>)[]; total: number; limit: number; offset: number };
    };

    beforeAll(async () => {
      org = await freshOrg();
      await insertRunner(t, org.org.id);
      for (let i = 0; i < 25; i++) {
        keys.push(await createOk({ agent_slug: 'shell', agentfile_layer: `PROMPT "task ${i}"` }, { key: org.key, org: org.slug }));
      }
      // Different creation times for half of them, and same-millisecond ties for the rest (ordered by id).
      for (let i = 0; i < 10; i++) {
        await t.store.db.updateTable('pods').set({ created_at: Date.parse('2026-01-01T00:00:00.000Z') + i * 1000 }).where('key', '=', keys[i]).execute();
      }
      for (const key of keys.slice(0, 5)) await setStatus(key, 'completed');
      await setStatus(keys[20], 'running');
    });

    it('→ {pods, total, limit, offset}, default limit 20, list items with the list fields only', async () => {
      const body = await list();
      expect(Object.keys(body).sort()).toEqual(['limit', 'offset', 'pods', 'total']);
      expect(body).toMatchObject({ total: 25, limit: 20, offset: 0 });
      expect(body.pods).toHaveLength(20);
      for (const pod of body.pods) {
        expect(Object.keys(pod).sort()).toEqual(LIST_KEYS);
        expect(pod.key).toMatch(POD_KEY);
        expect(Number.isInteger(pod.runner_id)).toBe(true);
        expect(pod.created_at).toMatch(ISO_MS);
        expect(pod.updated_at).toMatch(ISO_MS);
      }
    });

    it('newest first: by created_at, then id', async () => {
      const all = await list('?limit=100');
      expect(all.pods.map((p) => p.key)).toEqual([...keys.slice(10).reverse(), ...keys.slice(0, 10).reverse()]);
      expect(all.pods.find((p) => p.key === keys[3])!.prompt).toBe('task 3');
    });

    it('pages with limit and offset without gaps or repeats', async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < 25; offset += 7) {
        const page = await list(`?limit=7&offset=${offset}`);
        expect(page).toMatchObject({ total: 25, limit: 7, offset });
        seen.push(...page.pods.map((p) => p.key));
      }
      expect(seen).toEqual((await list('?limit=100')).pods.map((p) => p.key));
      const beyond = await list('?offset=25');
      expect(beyond).toMatchObject({ pods: [], total: 25, offset: 25 });
      expect((await list('?offset=1000000')).pods).toEqual([]);
    });

    it('clamps limit to 100 and says so', async () => {
      for (const limit of [101, 1000, 9_007_199_254_740_991]) {
        const body = await list(`?limit=${limit}`);
        expect(body.limit).toBe(100);
        expect(body.pods).toHaveLength(25);
      }
      expect((await list('?limit=100')).limit).toBe(100);
      expect((await list('?limit=1')).pods).toHaveLength(1);
    });

    it('filters by status, with total counting the filter', async () => {
      const completed = await list('?status=completed');
      expect(completed.total).toBe(5);
      expect(completed.pods.map((p) => p.key).sort()).toEqual(keys.slice(0, 5).sort());
      expect((await list('?status=running')).pods.map((p) => p.key)).toEqual([keys[20]]);
      expect((await list('?status=initializing')).total).toBe(19);
      expect(await list('?status=orphaned')).toMatchObject({ pods: [], total: 0 });
      const page = await list('?status=initializing&limit=5&offset=15');
      expect(page).toMatchObject({ total: 19, limit: 5, offset: 15 });
      expect(page.pods).toHaveLength(4);
    });

    it("never shows another organization's pods", async () => {
      const acme = await t.request({ method: 'GET', url: t.path('/pods?limit=100') });
      const acmeKeys = (acme.json() as { pods: { key: string }[] }).pods.map((p) => p.key);
      for (const key of keys) expect(acmeKeys).not.toContain(key);
    });
  });

  describe('agentfile_layer', () => {
    let repoId: number;
    let channelId: number;
    let ticketSlug: string;

    beforeAll(async () => {
      const repo = await admin('POST', '/orgs/acme/repositories', { name: 'web', full_name: 'acme/web', provider: 'git', url: 'https://git.example.com/acme/web.git' });
      expect(repo.statusCode, repo.body).toBe(201);
      repoId = (repo.json() as { repository: { id: number } }).repository.id;
      const second = await admin('POST', '/orgs/acme/repositories', { name: '42', full_name: 'acme/42', provider: 'git', url: 'https://git.example.com/acme/42.git' });
      expect(second.statusCode, second.body).toBe(201);
      const channel = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'pod-work' } });
      expect(channel.statusCode, channel.body).toBe(201);
      channelId = (channel.json() as { channel: { id: number } }).channel.id;
      const ticket = await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'task', title: 'Pod ticket' } });
      expect(ticket.statusCode, ticket.body).toBe(201);
      ticketSlug = (ticket.json() as { ticket: { slug: string } }).ticket.slug;
    });

    it('every directive lands in the pod: heredoc PROMPT, MODE, CONFIG, REPO by name, BRANCH, CREDENTIAL', async () => {
      const layer = [
        '# The task for the agent',
        '',
        'PROMPT <<END',
        'Fix the flaky test.',
        '  Keep "quotes" and  spacing.',
        '# not a comment inside the heredoc',
        'END',
        'MODE autopilot',
        'CONFIG model = claude-sonnet-4-5',
        'CONFIG max_turns = 12',
        'CONFIG max_cost_usd = 2.5',
        'CONFIG pod_timeout_minutes = 30',
        'CONFIG auto_close = false',
        `CONFIG channel_id = ${channelId}`,
        'CONFIG sandbox_type = worktree',
        'CONFIG max_iterations = 4',
        'CONFIG iteration_timeout_sec = 90',
        'CONFIG permission_mode = acceptEdits',
        'REPO web',
        'BRANCH feature/flaky-test',
        'CREDENTIAL GITHUB_TOKEN',
        'CREDENTIAL ANTHROPIC_API_KEY',
        'CREDENTIAL GITHUB_TOKEN',
      ].join('\n');
      const key = await createOk({ agent_slug: 'claude-code', agentfile_layer: layer, ticket_slug: ticketSlug.toLowerCase(), alias: 'flaky fixer' });
      expect(await detail(key)).toMatchObject({
        prompt: 'Fix the flaky test.\n  Keep "quotes" and  spacing.\n# not a comment inside the heredoc',
        mode: 'autopilot',
        max_turns: 12,
        max_cost_usd: 2.5,
        pod_timeout_minutes: 30,
        auto_close: false,
        channel_id: channelId,
        sandbox_type: 'worktree',
        repository_id: repoId,
        branch: 'feature/flaky-test',
        ticket_slug: ticketSlug,
        alias: 'flaky fixer',
      });
      // model, the iteration settings and the credentials are not part of the detail; they are stored for the runner.
      const row = await podRow(key);
      expect(JSON.parse(row.config)).toMatchObject({ model: 'claude-sonnet-4-5', max_iterations: 4, iteration_timeout_sec: 90, permission_mode: 'acceptEdits' });
      expect(JSON.parse(row.credentials)).toEqual(['GITHUB_TOKEN', 'ANTHROPIC_API_KEY']);
    });

    it('PROMPT as a quoted string with escapes; CRLF line endings; comments and blank lines ignored', async () => {
      const key = await createOk({ agent_slug: 'shell', agentfile_layer: '  # c\r\n\r\n  PROMPT "line1\\nline2 \\"q\\" \\u00e9"  \r\nMODE direct\r\n' });
      expect(await detail(key)).toMatchObject({ prompt: 'line1\nline2 "q" é', mode: 'direct' });
    });

    it('REPO by id; an all-digit quoted REPO is a name', async () => {
      expect((await detail(await createOk({ agent_slug: 'shell', agentfile_layer: `REPO ${repoId}` }))).repository_id).toBe(repoId);
      const byQuotedName = await detail(await createOk({ agent_slug: 'shell', agentfile_layer: 'REPO "42"' }));
      expect(byQuotedName.repository_id).not.toBeNull();
      expect(byQuotedName.repository_id).not.toBe(repoId);
    });

    it('an empty layer (or none) gives the defaults', async () => {
      for (const payload of [{ agent_slug: 'shell' }, { agent_slug: 'shell', agentfile_layer: '' }, { agent_slug: 'shell', agentfile_layer: '\n# only a comment\n' }]) {
        expect(await detail(await createOk(payload))).toMatchObject({ prompt: '', mode: 'direct', auto_close: true, max_turns: null, pod_timeout_minutes: null, repository_id: null, branch: null });
      }
    });

    it.each([
      ['PROMPT "x"\nBOGUS 1', 2],
      ['\n\n# comment\nMODE turbo', 4],
      ['PROMPT "a"\nPROMPT "b"', 2],
      ['MODE direct\nMODE autopilot', 2],
      ['CONFIG colour = red', 1],
      ['PROMPT "x"\nCONFIG max_turns = abc', 2],
      ['CONFIG max_turns = 0', 1],
      ['CONFIG pod_timeout_minutes = 10081', 1],
      ['CONFIG auto_close = yes', 1],
      ['CONFIG max_turns = 5\nCONFIG max_turns = 6', 2],
      ['CONFIG channel_id = -1', 1],
      ['CONFIG sandbox_type = docker', 1],
      ['CONFIG model', 1],
      ['PROMPT <<END\nnever closed', 1],
      ['prompt "lower-case directive"', 1],
      ['PROMPT fix it', 1],
      ['PROMPT "unterminated', 1],
      ['PROMPT "x" trailing', 1],
      ['MODE direct # a comment is not allowed here', 1],
      ['REPO web\nREPO web', 2],
      ['BRANCH a..b', 1],
      ['BRANCH -x', 1],
      ['CREDENTIAL lower_case', 1],
      ['CREDENTIAL DROVER_API_URL', 1],
      ['CREDENTIAL PATH', 1],
      ['PROMPT "x"\r\nMODE nope\r\n', 2],
      ['MODE', 1],
    ])('%j → 400 naming agentfile_layer and line %i, nothing written', async (layer, line) => {
      const count = await podCount();
      const body = expectError(await create({ agent_slug: 'shell', agentfile_layer: layer }), 400, 'VALIDATION_FAILED');
      // Body fields are JSON pointers (docs/api.md "Errors"; the ticket tests settled /field over field).
      expect(body.details![0].field).toBe('/agentfile_layer');
      expect(body.details![0].message).toMatch(new RegExp(`\\bline ${line}\\b`));
      expect(body.error).toMatch(new RegExp(`^agentfile_layer line ${line}: `));
      expect(await podCount()).toBe(count);
    });

    it('REPO naming no repository of this org → 400 on agentfile_layer, nothing written', async () => {
      const otherRepo = await admin('POST', '/orgs/globex/repositories', { name: 'secret', full_name: 'globex/secret', provider: 'git', url: 'https://git.example.com/globex/secret.git' });
      expect(otherRepo.statusCode, otherRepo.body).toBe(201);
      const otherRepoId = (otherRepo.json() as { repository: { id: number } }).repository.id;
      const count = await podCount();
      for (const layer of ['REPO nope', 'REPO 999999', 'REPO secret', `REPO ${otherRepoId}`, 'PROMPT "x"\nREPO Web']) {
        const body = expectInvalid(await create({ agent_slug: 'shell', agentfile_layer: layer }), 'agentfile_layer');
        expect(body.error).toMatch(/REPO/);
      }
      expect(await podCount()).toBe(count);
    });

    // Was a bug (fixed): an unknown repository is 400 naming the line (docs/agentfile.md "Lines"). src/domain/pods/service.ts
    // resolveRepository (line 55) throws invalid('/agentfile_layer', 'REPO names no repository …') without a line, and
    // the foreign channel_id check in launchPod (line 81) does the same. agentfile.ts already offers the tools
    // (parseAgentfileLayerWithLines gives lines.REPO / lines['CONFIG channel_id'], agentfileError(line, reason)). Fix:
    // createPod parses with parseAgentfileLayerWithLines and passes the lines to launchPod, which throws
    // agentfileError(lines.REPO ?? null, …) and agentfileError(lines['CONFIG channel_id'] ?? null, …).
    it('an unknown REPO and a foreign CONFIG channel_id name their line, like every other agentfile error', async () => {
      const repo = await create({ agent_slug: 'shell', agentfile_layer: 'PROMPT "x"\nMODE direct\nREPO nope' });
      expect(expectInvalid(repo, 'agentfile_layer').details![0].message).toMatch(/\bline 3\b/);
      const channel = await create({ agent_slug: 'shell', agentfile_layer: 'PROMPT "x"\nCONFIG channel_id = 999999' });
      expect(expectInvalid(channel, 'agentfile_layer').details![0].message).toMatch(/\bline 2\b/);
    });

    it('CONFIG channel_id of another org, or of no channel → 400, nothing written', async () => {
      const foreign = await t.request({ method: 'POST', url: t.path('/channels', 'globex'), key: otherKey, payload: { name: 'globex-only' } });
      expect(foreign.statusCode, foreign.body).toBe(201);
      const foreignId = (foreign.json() as { channel: { id: number } }).channel.id;
      const count = await podCount();
      for (const id of [foreignId, 999_999]) {
        const body = expectInvalid(await create({ agent_slug: 'shell', agentfile_layer: `CONFIG channel_id = ${id}` }), 'agentfile_layer');
        expect(body.error).toMatch(/channel_id/);
      }
      expect(await podCount()).toBe(count);
    });

    it('an agentfile_layer over 64 KiB → 400 naming agentfile_layer', async () => {
      const count = await podCount();
      expectInvalid(await create({ agent_slug: 'shell', agentfile_layer: `PROMPT "${'x'.repeat(64 * 1024)}"` }), 'agentfile_layer');
      // Under 64 Ki characters but over 64 KiB of UTF-8: the parser's byte limit.
      expectInvalid(await create({ agent_slug: 'shell', agentfile_layer: `PROMPT "${'é'.repeat(40_000)}"` }), 'agentfile_layer');
      expect(await podCount()).toBe(count);
      const big = await createOk({ agent_slug: 'shell', agentfile_layer: `PROMPT "${'x'.repeat(60 * 1024)}"` });
      expect((await detail(big)).prompt).toHaveLength(60 * 1024);
    });
  });

  describe('references that must exist', () => {
    it('an unknown agent_slug → 400 naming agent_slug; a custom agent of the org is accepted', async () => {
      const count = await podCount();
      for (const slug of ['no-such-agent', 'Shell', 'claude', 'my-bot']) expectInvalid(await create({ agent_slug: slug }), 'agent_slug');
      expect(await podCount()).toBe(count);
      const agent = await admin('POST', '/orgs/acme/agents', { slug: 'my-bot', name: 'My bot', command: 'my-bot', args: ['--yes'] });
      expect(agent.statusCode, agent.body).toBe(201);
      // The runner advertises built-in agents only; custom ones are placed on any available runner.
      const key = await createOk({ agent_slug: 'my-bot', agentfile_layer: 'PROMPT "go"' });
      expect(await detail(key)).toMatchObject({ agent_slug: 'my-bot', prompt: 'go', runner_id: runnerId });
      // Another org's custom agent is not ours.
      const globexAgent = await admin('POST', '/orgs/globex/agents', { slug: 'globex-bot', name: 'G', command: 'g' });
      expect(globexAgent.statusCode, globexAgent.body).toBe(201);
      expectInvalid(await create({ agent_slug: 'globex-bot' }), 'agent_slug');
    });

    it('every built-in agent the runner has is accepted', async () => {
      const org = await freshOrg();
      const builtins = ['claude-code', 'codex', 'gemini-cli', 'aider', 'opencode', 'shell'];
      await insertRunner(t, org.org.id, { agents: JSON.stringify(builtins) });
      for (const slug of builtins) await createOk({ agent_slug: slug }, { key: org.key, org: org.slug });
    });

    it('an unknown ticket_slug, or one of another org → 400 naming ticket_slug', async () => {
      const foreign = await t.request({ method: 'POST', url: t.path('/tickets', 'globex'), key: otherKey, payload: { type: 'bug', title: 'globex ticket' } });
      expect(foreign.statusCode, foreign.body).toBe(201);
      const foreignSlug = (foreign.json() as { ticket: { slug: string } }).ticket.slug;
      const count = await podCount();
      for (const slug of ['ACME-999', foreignSlug, 'nope']) expectInvalid(await create({ agent_slug: 'shell', ticket_slug: slug }), 'ticket_slug');
      expect(await podCount()).toBe(count);
    });

    it('a runner_id unknown in this org, or of another org → 400 naming runner_id', async () => {
      const count = await podCount();
      for (const id of [999_999, otherRunnerId]) expectInvalid(await create({ agent_slug: 'shell', runner_id: id }), 'runner_id');
      expect(await podCount()).toBe(count);
      expect(await podCount()).toBe(count);
    });
  });

  describe('placement on runners', () => {
    it('runner_id given and available → the pod is on that runner', async () => {
      const org = await freshOrg();
      const a = await insertRunner(t, org.org.id);
      const b = await insertRunner(t, org.org.id);
      for (const id of [a, b, a]) {
        const key = await createOk({ agent_slug: 'shell', runner_id: id }, { key: org.key, org: org.slug });
        expect((await detail(key, org.slug, org.key)).runner_id).toBe(id);
      }
    });

    it.each<[string, Partial<Omit<RunnersTable, 'id' | 'org_id'>>]>([
      ['offline', { status: 'offline' }],
      ['draining', { status: 'draining' }],
      ['silent for 31 s', { last_heartbeat_at: Date.now() - 31_000 }],
      ['never heard from', { last_heartbeat_at: null }],
    ])('runner_id of a runner %s → 409 RUNNER_UNAVAILABLE; without runner_id the pod is queued (the runner has the agent)', async (_why, overrides) => {
      const org = await freshOrg();
      const id = await insertRunner(t, org.org.id, overrides);
      const count = await podCount();
      const body = expectError(await create({ agent_slug: 'shell', runner_id: id }, { key: org.key, org: org.slug }), 409, 'RUNNER_UNAVAILABLE');
      expect(body.error).toContain(String(id));
      expect(await podCount()).toBe(count);
      const queued = await created(await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug }));
      expect(queued).toMatchObject({ status: 'queued', agent_slug: 'shell' });
      expect(await detail(queued.pod_key, org.slug, org.key)).toMatchObject({ status: 'queued', runner_id: null, queue_position: 1 });
    });

    it.each<[string, string]>([
      ['lacking the agent', '["shell"]'],
      ['advertising no agents', '[]'],
    ])('a runner %s: runner_id → 409 RUNNER_UNAVAILABLE; without runner_id → 503 NO_AVAILABLE_RUNNER, nothing written', async (_why, agents) => {
      const org = await freshOrg();
      const id = await insertRunner(t, org.org.id, { agents });
      const count = await podCount();
      const named = expectError(await create({ agent_slug: 'claude-code', runner_id: id }, { key: org.key, org: org.slug }), 409, 'RUNNER_UNAVAILABLE');
      expect(named.error).toMatch(/does not have the agent "claude-code"/);
      const body = expectError(await create({ agent_slug: 'claude-code' }, { key: org.key, org: org.slug }), 503, 'NO_AVAILABLE_RUNNER');
      expect(body.error).toContain('claude-code');
      expect(await podCount()).toBe(count);
    });

    it('a full runner queues pods (for it, when named), and a slot that frees starts the oldest queued pod', async () => {
      const org = await freshOrg();
      const id = await insertRunner(t, org.org.id, { max_pods: 2 });
      const first = await createOk({ agent_slug: 'shell', runner_id: id }, { key: org.key, org: org.slug });
      await createOk({ agent_slug: 'shell' }, { key: org.key, org: org.slug });
      const named = await created(await create({ agent_slug: 'shell', runner_id: id }, { key: org.key, org: org.slug }));
      const unnamed = await created(await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug }));
      expect([named.status, unnamed.status]).toEqual(['queued', 'queued']);
      expect(await detail(named.pod_key, org.slug, org.key)).toMatchObject({ status: 'queued', runner_id: null, queue_position: 1 });
      expect(await detail(unnamed.pod_key, org.slug, org.key)).toMatchObject({ status: 'queued', runner_id: null, queue_position: 2 });
      const config = JSON.parse((await podRow(named.pod_key)).config) as { requested_runner_id: number | null };
      expect(config.requested_runner_id).toBe(id);

      const end = await t.request({ method: 'POST', url: t.path(`/pods/${first}/terminate`, org.slug), key: org.key });
      expect(end.statusCode, end.body).toBe(200);
      const started = await waitFor(async () => {
        const pod = await detail(named.pod_key, org.slug, org.key);
        return pod.status === 'initializing' ? pod : undefined;
      });
      expect(started).toMatchObject({ runner_id: id, queue_position: null });
      expect(await detail(unnamed.pod_key, org.slug, org.key)).toMatchObject({ status: 'queued', queue_position: 1 });
    });

    it('a heartbeat just inside 30 s still counts as fresh', async () => {
      const org = await freshOrg();
      const id = await insertRunner(t, org.org.id, { last_heartbeat_at: Date.now() - 25_000 });
      await createOk({ agent_slug: 'shell', runner_id: id }, { key: org.key, org: org.slug });
    });

    it('no runner at all → 503 NO_AVAILABLE_RUNNER; runners of other orgs do not count', async () => {
      const org = await freshOrg();
      const count = await podCount();
      const body = expectError(await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug }), 503, 'NO_AVAILABLE_RUNNER');
      expect(body.error).toContain('shell');
      expect(await podCount()).toBe(count);
    });

    it('picks the available runner with the fewest active pods (lowest id on a tie), skipping unfit ones', async () => {
      const org = await freshOrg();
      const a = await insertRunner(t, org.org.id, { max_pods: 10 });
      const b = await insertRunner(t, org.org.id, { max_pods: 10 });
      await insertRunner(t, org.org.id, { max_pods: 10, status: 'offline' });
      await insertRunner(t, org.org.id, { max_pods: 10, agents: '["codex"]' });
      const placed = async () => (await detail(await createOk({ agent_slug: 'shell' }, { key: org.key, org: org.slug }), org.slug, org.key)).runner_id;
      const pinnedA = [
        await createOk({ agent_slug: 'shell', runner_id: a }, { key: org.key, org: org.slug }),
        await createOk({ agent_slug: 'shell', runner_id: a }, { key: org.key, org: org.slug }),
      ];
      expect(await placed()).toBe(b); // a 2, b 0
      expect(await placed()).toBe(b); // a 2, b 1
      expect(await placed()).toBe(a); // a 2, b 2: tie → lowest id
      expect(await placed()).toBe(b); // a 3, b 2
      // Ended pods do not count: a's pinned pods finish.
      for (const key of pinnedA) await setStatus(key, 'completed');
      expect(await placed()).toBe(a); // a 1, b 3
      // Orphaned pods are active and do count: b's three pods lose their runner, b still counts 3.
      await t.store.db.updateTable('pods').set({ status: 'orphaned' }).where('runner_id', '=', b).where('status', '=', 'initializing').execute();
      expect(await placed()).toBe(a); // a 2, b 3 (orphaned)
    });

    it('a custom agent (no runner can advertise one): any runner counts, so it runs or queues; 503 only when the org has no runner', async () => {
      const org = await freshOrg();
      const agent = await admin('POST', `/orgs/${org.slug}/agents`, { slug: 'own-bot', name: 'Own bot', command: 'own-bot' });
      expect(agent.statusCode, agent.body).toBe(201);
      expectError(await create({ agent_slug: 'own-bot' }, { key: org.key, org: org.slug }), 503, 'NO_AVAILABLE_RUNNER');
      const id = await insertRunner(t, org.org.id, { agents: '[]', max_pods: 1 });
      const running = await created(await create({ agent_slug: 'own-bot' }, { key: org.key, org: org.slug }));
      expect(running.status).toBe('initializing');
      expect((await detail(running.pod_key, org.slug, org.key)).runner_id).toBe(id);
      const waiting = await created(await create({ agent_slug: 'own-bot' }, { key: org.key, org: org.slug }));
      expect(waiting.status).toBe('queued');
      // A built-in agent that runner does not advertise is still 503.
      expectError(await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug }), 503, 'NO_AVAILABLE_RUNNER');
    });

    it('concurrent creates never overfill a runner: the ones past max_pods are queued, in one queue without gaps', async () => {
      const org = await freshOrg();
      const id = await insertRunner(t, org.org.id, { max_pods: 3 });
      const results = await Promise.all(Array.from({ length: 10 }, () => create({ agent_slug: 'shell' }, { key: org.key, org: org.slug })));
      expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
      const onRunner = await t.store.db.selectFrom('pods').select('id').where('runner_id', '=', id).execute();
      expect(onRunner).toHaveLength(3);
      const list = await t.request({ method: 'GET', url: t.path('/pods?status=queued', org.slug), key: org.key });
      const queued = (list.json() as { pods: { queue_position: number; runner_id: number | null }[] }).pods;
      expect(queued.map((pod) => pod.queue_position).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(queued.every((pod) => pod.runner_id === null)).toBe(true);
    });
  });

  describe('POST /pods/:key/terminate', () => {
    it('an active pod → 200 {message}; it is terminated with finished_at; again → 409 POD_NOT_ACTIVE', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const res = await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { message: string };
      expect(Object.keys(body)).toEqual(['message']);
      expect(body.message).toContain(key);
      const pod = await detail(key);
      expect(pod).toMatchObject({ status: 'terminated', finished_at: expect.stringMatching(ISO_MS) });
      expect(pod.error_message).not.toBeNull();
      expect((await podRow(key)).desired_state).toBe('stop');
      const before = await podRow(key);
      expectError(await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) }), 409, 'POD_NOT_ACTIVE');
      expect(await podRow(key)).toEqual(before);
    });

    it('concurrent terminates: exactly one succeeds, the others are 409 POD_NOT_ACTIVE', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const results = await Promise.all(Array.from({ length: 6 }, () => t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })));
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.statusCode === 409)) expect((r.json() as { code: string }).code).toBe('POD_NOT_ACTIVE');
      const pod = await detail(key);
      expect(pod.status).toBe('terminated');
      expect(Date.parse(pod.updated_at)).toBeGreaterThanOrEqual(Date.parse(pod.finished_at!));
    });

    it('running and orphaned pods are active too; completed and failed ones are not', async () => {
      for (const status of ['running', 'orphaned'] as const) {
        const key = await createOk({ agent_slug: 'shell' });
        await setStatus(key, status);
        expect((await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })).statusCode).toBe(200);
        expect((await detail(key)).status).toBe('terminated');
      }
      for (const status of ['completed', 'failed'] as const) {
        const key = await createOk({ agent_slug: 'shell' });
        await setStatus(key, status);
        expectError(await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) }), 409, 'POD_NOT_ACTIVE');
        expect((await detail(key)).status).toBe(status);
      }
    });

    it('an unknown key → 404 NOT_FOUND', async () => {
      expectError(await t.request({ method: 'POST', url: t.path('/pods/p-doesnotexist00/terminate') }), 404, 'NOT_FOUND');
    });

    it("a pod with a channel: the channel hears that it ended", async () => {
      const channel = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'terminations' } });
      const channelId = (channel.json() as { channel: { id: number } }).channel.id;
      const key = await createOk({ agent_slug: 'shell', agentfile_layer: `CONFIG channel_id = ${channelId}` });
      expect((await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })).statusCode).toBe(200);
      const messages = await t.request({ method: 'GET', url: t.path(`/channels/${channelId}/messages`) });
      const list = (messages.json() as { messages: { sender_type: string; pod_key: string | null; content: string }[] }).messages;
      expect(list.some((m) => m.sender_type === 'system' && m.pod_key === key)).toBe(true);
    });
  });

  describe('GET /pods/:key/output', () => {
    const output = async (key: string, query = '') => {
      const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}/output${query}`) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { output: string; truncated: boolean; total_bytes: number };
    };
    const podId = async (key: string) => Number((await podRow(key)).id);

    it('no output yet → {output: "", truncated: false, total_bytes: 0}', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const body = await output(key);
      expect(body).toEqual({ output: '', truncated: false, total_bytes: 0 });
      expect(await output(key, '?tail_bytes=10')).toEqual({ output: '', truncated: false, total_bytes: 0 });
    });

    it('returns the kept output; tail_bytes keeps the end; truncated says whether bytes are missing', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      await appendOutputChunk(t.store.db, await podId(key), 0, 'hello world\n');
      expect(await output(key)).toEqual({ output: 'hello world\n', truncated: false, total_bytes: 12 });
      expect(await output(key, '?tail_bytes=6')).toEqual({ output: 'world\n', truncated: true, total_bytes: 12 });
      expect(await output(key, '?tail_bytes=12')).toEqual({ output: 'hello world\n', truncated: false, total_bytes: 12 });
      expect(await output(key, '?tail_bytes=1048576')).toEqual({ output: 'hello world\n', truncated: false, total_bytes: 12 });
    });

    it('output beyond the kept 1 MiB is truncated even without tail_bytes', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      await appendOutputChunk(t.store.db, await podId(key), 5_000_000 - 'the tail'.length, 'the tail');
      expect(await output(key)).toEqual({ output: 'the tail', truncated: true, total_bytes: 5_000_000 });
    });

    it('tail_bytes cuts on a character boundary and never returns more bytes than asked', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const data = 'héllo wörld 🐄!';
      const bytes = Buffer.byteLength(data);
      await appendOutputChunk(t.store.db, await podId(key), 0, data);
      for (let n = 1; n <= bytes + 1; n++) {
        const body = await output(key, `?tail_bytes=${n}`);
        expect(Buffer.byteLength(body.output)).toBeLessThanOrEqual(n);
        expect(data.endsWith(body.output)).toBe(true);
        expect(body.output).not.toContain('\ufffd');
        expect(body.truncated).toBe(Buffer.byteLength(body.output) < bytes);
        expect(body.total_bytes).toBe(bytes);
      }
    });

    it('an unknown key → 404', async () => {
      expectError(await t.request({ method: 'GET', url: t.path('/pods/p-doesnotexist00/output') }), 404, 'NOT_FOUND');
    });
  });

  describe('Idempotency-Key on POST /pods', () => {
    it('the same key and body replays the first response; a different body → 409 IDEMPOTENCY_MISMATCH', async () => {
      const headers = { 'idempotency-key': 'pods-create-1' };
      const payload = { agent_slug: 'shell', agentfile_layer: 'PROMPT "once"', alias: 'once' };
      const first = await create(payload, { headers });
      expect(first.statusCode, first.body).toBe(201);
      const count = await podCount();
      const again = await create(payload, { headers });
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json()).toEqual(first.json());
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await podCount()).toBe(count);
      expectError(await create({ ...payload, alias: 'twice' }, { headers }), 409, 'IDEMPOTENCY_MISMATCH');
      expect(await podCount()).toBe(count);
      // Without the header, or with another key, it is a new pod.
      const fresh = await create(payload);
      expect(fresh.statusCode).toBe(201);
      expect((fresh.json() as { pod: { pod_key: string } }).pod.pod_key).not.toBe((first.json() as { pod: { pod_key: string } }).pod.pod_key);
      expect((await create(payload, { headers: { 'idempotency-key': 'pods-create-2' } })).statusCode).toBe(201);
      expect(await podCount()).toBe(count + 2);
    });

    it('keys are per API key: another key with the same Idempotency-Key creates its own pod', async () => {
      const headers = { 'idempotency-key': 'shared-key' };
      const first = await create({ agent_slug: 'shell' }, { headers });
      const { key } = await t.issueKey(['pods:write']);
      const second = await create({ agent_slug: 'shell' }, { headers, key });
      expect(first.statusCode).toBe(201);
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect((second.json() as { pod: { pod_key: string } }).pod.pod_key).not.toBe((first.json() as { pod: { pod_key: string } }).pod.pod_key);
    });

    it('a refused create is replayed as the same error and still creates nothing', async () => {
      const headers = { 'idempotency-key': 'bad-agent' };
      const count = await podCount();
      const first = await create({ agent_slug: 'no-such-agent' }, { headers });
      expectInvalid(first, 'agent_slug');
      const again = await create({ agent_slug: 'no-such-agent' }, { headers });
      expect(again.statusCode).toBe(400);
      expect(await podCount()).toBe(count);
    });

    it('concurrent creates with one Idempotency-Key make one pod; the others replay it or are 409 IDEMPOTENCY_IN_PROGRESS', async () => {
      const headers = { 'idempotency-key': 'concurrent-create' };
      const count = await podCount();
      const results = await Promise.all(Array.from({ length: 5 }, () => create({ agent_slug: 'shell', alias: 'race' }, { headers })));
      expect(await podCount()).toBe(count + 1);
      const created = results.filter((r) => r.statusCode === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      const keys = new Set(created.map((r) => (r.json() as { pod: { pod_key: string } }).pod.pod_key));
      expect(keys.size).toBe(1);
      for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'IDEMPOTENCY_IN_PROGRESS');
    });

    it('a 503 NO_AVAILABLE_RUNNER is not stored: the same key may be retried once a runner is there', async () => {
      const org = await freshOrg();
      const headers = { 'idempotency-key': 'retry-after-503' };
      expectError(await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug, headers }), 503, 'NO_AVAILABLE_RUNNER');
      await insertRunner(t, org.org.id);
      const retry = await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug, headers });
      expect(retry.statusCode, retry.body).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      const replay = await create({ agent_slug: 'shell' }, { key: org.key, org: org.slug, headers });
      expect(replay.json()).toEqual(retry.json());
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });

    it('an Idempotency-Key over 255 characters → 400', async () => {
      const count = await podCount();
      expectError(await create({ agent_slug: 'shell' }, { headers: { 'idempotency-key': 'k'.repeat(256) } }), 400, 'VALIDATION_FAILED');
      expect(await podCount()).toBe(count);
    });
  });

  describe('the pod token (DROVER_POD_TOKEN)', () => {
    let podKey: string;
    let token: string;
    let channelId: number;

    const asPod = (method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>, org?: string) =>
      t.request({ method, url: t.path(path, org), key: token, ...(payload ? { payload } : {}) });

    beforeAll(async () => {
      const channel = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'agents-talk' } });
      channelId = (channel.json() as { channel: { id: number } }).channel.id;
      podKey = await createOk({ agent_slug: 'shell', agentfile_layer: `CONFIG channel_id = ${channelId}` });
      const row = await podRow(podKey);
      token = t.secrets.decrypt(row.token_encrypted);
      expect(token).toMatch(/^drvpod_[A-Za-z0-9]{40}$/);
      expect(row.token_hash).not.toContain(token);
    });

    it('reads pods (pods:read)', async () => {
      const list = await asPod('GET', '/pods');
      expect(list.statusCode, list.body).toBe(200);
      expect((await asPod('GET', `/pods/${podKey}`)).statusCode).toBe(200);
      expect((await asPod('GET', `/pods/${podKey}/output`)).statusCode).toBe(200);
    });

    it('posts channel messages as sender_type agent with its own pod_key (channels:write)', async () => {
      const res = await asPod('POST', `/channels/${channelId}/messages`, { content: 'hello from the agent' });
      expect(res.statusCode, res.body).toBe(201);
      expect((res.json() as { message: Record<string, unknown> }).message).toMatchObject({ sender_type: 'agent', pod_key: podKey, content: 'hello from the agent' });
      const own = await asPod('POST', `/channels/${channelId}/messages`, { content: 'with my key', pod_key: podKey });
      expect(own.statusCode, own.body).toBe(201);
      // It cannot speak for another pod.
      const otherPod = await createOk({ agent_slug: 'shell' });
      expectInvalid(await asPod('POST', `/channels/${channelId}/messages`, { content: 'impostor', pod_key: otherPod }), 'pod_key');
    });

    it('creates tickets (tickets:write)', async () => {
      const res = await asPod('POST', '/tickets', { type: 'bug', title: 'Found by the agent' });
      expect(res.statusCode, res.body).toBe(201);
    });

    it('reads runners, repositories and loops (docs/mcp.md), but terminates only pods it spawned and writes no loop', async () => {
      expect(expectError(await asPod('POST', `/pods/${podKey}/terminate`), 403, 'INSUFFICIENT_SCOPE').required_scopes).toEqual(['pods:write']);
      const other = await createOk({ agent_slug: 'shell' });
      expectError(await asPod('POST', `/pods/${other}/terminate`), 403, 'INSUFFICIENT_SCOPE');
      expect((await detail(podKey)).status).toBe('initializing');
      expect((await detail(other)).status).toBe('initializing');
      for (const path of ['/runners', '/runners/available', `/runners/${runnerId}`, `/runners/${runnerId}/pods`, '/repositories', '/loops']) {
        const res = await asPod('GET', path);
        expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
      }
      const loop = expectError(await asPod('POST', '/loops', { name: 'not mine', prompt_template: 'x', agent_slug: 'shell' }), 403, 'INSUFFICIENT_SCOPE');
      expect(loop.required_scopes).toEqual(['loops:write']);
    });

    it('gets 404 on another organization', async () => {
      expectError(await asPod('GET', '/pods', undefined, 'globex'), 404, 'NOT_FOUND');
      expectError(await asPod('POST', '/tickets', { type: 'bug', title: 'x' }, 'globex'), 404, 'NOT_FOUND');
    });

    it('is refused (401) in the Authorization header too once a character is off', async () => {
      const res = await t.request({ method: 'GET', url: t.path('/pods'), key: null, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, res.body).toBe(200);
      const wrong = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
      expectError(await t.request({ method: 'GET', url: t.path('/pods'), key: wrong }), 401, 'INVALID_API_KEY');
    });

    it('stops working (401) once its pod has ended', async () => {
      const key = await createOk({ agent_slug: 'shell' });
      const podToken = t.secrets.decrypt((await podRow(key)).token_encrypted);
      expect((await t.request({ method: 'GET', url: t.path('/pods'), key: podToken })).statusCode).toBe(200);
      expect((await t.request({ method: 'POST', url: t.path(`/pods/${key}/terminate`) })).statusCode).toBe(200);
      const count = await t.store.db.selectFrom('tickets').select('id').execute();
      expectError(await t.request({ method: 'GET', url: t.path('/pods'), key: podToken }), 401, 'INVALID_API_KEY');
      expectError(await t.request({ method: 'POST', url: t.path('/tickets'), key: podToken, payload: { type: 'bug', title: 'late' } }), 401, 'INVALID_API_KEY');
      expect(await t.store.db.selectFrom('tickets').select('id').execute()).toHaveLength(count.length);
      // A pod that completed on its own, too.
      const done = await createOk({ agent_slug: 'shell' });
      const doneToken = t.secrets.decrypt((await podRow(done)).token_encrypted);
      await setStatus(done, 'completed');
      expectError(await t.request({ method: 'GET', url: t.path('/pods'), key: doneToken }), 401, 'INVALID_API_KEY');
    });
  });
});
