/**
 * The loop endpoints (docs/api.md "Loops and runs") under both prefixes they are served
 * at: create (defaults, slugs, validation), list, get, update, enable/disable, trigger under the
 * three concurrency policies, templates, runs (list, get, cancel), delete and the loop's stats.
 *
 * No runner process runs here. The org `acme` gets one runner row as a connected runner would leave
 * it (online, fresh heartbeat, plenty of slots), so runs get pods; the pods stay `initializing`
 * until a test reports an outcome through src/domain/pods/lifecycle.ts with the app's own context
 * (whose `podChanged` makes the loop run follow its pod). The org `bare` has no runner: its runs
 * wait in `pending`. The clock is the test's: it only moves when a test moves it.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/protocol/scopes.ts';
import type { DomainContext } from '../../src/domain/context.ts';
import { sweepRuns } from '../../src/domain/loops/run-follow.ts';
import { START_LEASE_MS, START_RETRY_MS } from '../../src/domain/loops/run-records.ts';
import * as runRecords from '../../src/store/loop-runs.ts';
import { podFinished, podStarted } from '../../src/domain/pods/lifecycle.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { type ErrorBodyJson, expectError } from '../helpers/errors.ts';
import { insertRunner as insertRunnerRow, type RunnerOverrides } from '../helpers/runners.ts';

const PREFIXES = ['/api/v1/ext/orgs', '/api/v1/orgs'] as const;
const START = Date.parse('2026-11-22T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const LOOP_KEYS = [
  'active_run_count',
  'agent_slug',
  'agentfile_layer',
  'autopilot_config',
  'branch_name',
  'budget_usd_per_day',
  'callback_secret',
  'callback_url',
  'cancelled_runs',
  'concurrency_policy',
  'created_at',
  'cron_expression',
  'cron_timezone',
  'custom_agent_slug',
  'description',
  'execution_mode',
  'failed_runs',
  'id',
  'last_run_at',
  'max_concurrent_runs',
  'name',
  'next_run_at',
  'preset',
  'prompt_template',
  'prompt_variables',
  'repository_id',
  'runner_id',
  'runner_labels',
  'sandbox_strategy',
  'session_persistence',
  'slug',
  'spent_usd_today',
  'status',
  'successful_runs',
  'timeout_minutes',
  'total_cost_usd',
  'total_runs',
  'updated_at',
];
const RUN_KEYS = [
  'callback_status',
  'created_at',
  'delivery',
  'duration_sec',
  'error_message',
  'finished_at',
  'id',
  'loop_id',
  'loop_slug',
  'pod_key',
  'resolved_prompt',
  'result',
  'run_number',
  'runner_id',
  'scheduled_at',
  'session_id',
  'started_at',
  'status',
  'trigger_type',
  'triggered_by',
  'updated_at',
  'usage',
  'variables',
];

interface LoopJson {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  agent_slug: string | null;
  custom_agent_slug: string | null;
  prompt_template: string;
  prompt_variables: Record<string, unknown>;
  repository_id: number | null;
  runner_id: number | null;
  branch_name: string | null;
  execution_mode: string;
  cron_expression: string | null;
  cron_timezone: string;
  sandbox_strategy: string;
  session_persistence: boolean;
  concurrency_policy: string;
  max_concurrent_runs: number;
  timeout_minutes: number;
  callback_url: string | null;
  callback_secret?: string;
  autopilot_config: { max_iterations: number; iteration_timeout_sec: number };
  status: 'enabled' | 'disabled';
  next_run_at: string | null;
  last_run_at: string | null;
  total_runs: number;
  successful_runs: number;
  cancelled_runs: number;
  failed_runs: number;
  active_run_count: number;
  created_at: string;
  updated_at: string;
}

interface RunJson {
  id: number;
  loop_id: number;
  loop_slug: string;
  run_number: number;
  status: string;
  trigger_type: string;
  variables: Record<string, unknown>;
  resolved_prompt: string | null;
  pod_key: string | null;
  runner_id: number | null;
  scheduled_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_sec: number | null;
  error_message: string | null;
  callback_status: string;
  created_at: string;
  updated_at: string;
}

/** 400 VALIDATION_FAILED whose details name `field` (a body pointer such as `/name`, or a parameter name). */
function expectInvalid(res: LightMyRequestResponse, field: string): ErrorBodyJson {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  expect(Array.isArray(body.details), res.body).toBe(true);
  expect(body.details!.map((d) => d.field), res.body).toContain(field);
  return body;
}

describe.each(DATABASES)('loops API on %s', (kind) => {
  describe.each(PREFIXES)('under %s/{org}', (prefix) => {
    let t: TestApp;
    /** The app's own context: its podChanged makes loop runs follow their pods. */
    let ctx: DomainContext;
    let clock = START;
    let runnerId: number;
    let bareKey: string;
    let orgSeq = 0;

    interface Who {
      org?: string;
      key?: string | null;
    }
    const url = (path: string, org = 'acme') => `${prefix}/${org}${path}`;
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: unknown, who: Who = {}) =>
      t.request({ method, url: url(path, who.org), key: who.key, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

    const create = async (body: Record<string, unknown>, who: Who = {}): Promise<LoopJson> => {
      const res = await call('POST', '/loops', body, who);
      expect(res.statusCode, res.body).toBe(201);
      return (res.json() as { loop: LoopJson }).loop;
    };
    let loopSeq = 0;
    /** A loop of `acme` with a unique slug; runs get pods (acme has a runner). */
    const loop = (body: Record<string, unknown> = {}, who: Who = {}) => {
      loopSeq += 1;
      return create({ name: `Loop ${loopSeq}`, slug: `l-${loopSeq}`, agent_slug: 'shell', prompt_template: 'echo hi', ...body }, who);
    };
    const getLoop = async (slug: string, who: Who = {}): Promise<LoopJson> => {
      const res = await call('GET', `/loops/${slug}`, undefined, who);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { loop: LoopJson }).loop;
    };
    const trigger = async (slug: string, variables?: Record<string, unknown>, who: Who = {}): Promise<RunJson> => {
      const res = await call('POST', `/loops/${slug}/trigger`, variables === undefined ? undefined : { variables }, who);
      expect(res.statusCode, res.body).toBe(201);
      return (res.json() as { run: RunJson }).run;
    };
    const getRun = async (slug: string, id: number, who: Who = {}): Promise<RunJson> => {
      const res = await call('GET', `/loops/${slug}/runs/${id}`, undefined, who);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { run: RunJson }).run;
    };
    const allRuns = async (slug: string, who: Who = {}): Promise<RunJson[]> => {
      const res = await call('GET', `/loops/${slug}/runs?limit=100`, undefined, who);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { runs: RunJson[] }).runs;
    };
    const counts = async () => {
      const loops = await t.store.db.selectFrom('loops').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const runs = await t.store.db.selectFrom('loop_runs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const pods = await t.store.db.selectFrom('pods').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { loops: Number(loops.n), runs: Number(runs.n), pods: Number(pods.n) };
    };
    const podRow = (key: string) => t.store.db.selectFrom('pods').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
    /** What a runner reports when the pod's agent ends. */
    const finishPod = async (key: string, outcome: 'completed' | 'failed', errorMessage: string | null = null) => {
      const pod = await podRow(key);
      await podFinished(ctx, pod.runner_id!, { key, outcome, exit_code: outcome === 'completed' ? 0 : 1, error_message: errorMessage, session_id: null });
    };
    const advance = async (ms: number) => {
      clock += ms;
      await t.store.db.updateTable('runners').set({ last_heartbeat_at: clock }).execute();
    };
    const insertRunner = (orgId: number, overrides: RunnerOverrides = {}) => insertRunnerRow(t.store, orgId, overrides, clock);
    const admin = (method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>) =>
      t.request({ method, url: `/api/v1/admin${path}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });
    /** An organization of its own (for tests that see every loop of the org), with an all-scopes key. */
    const freshOrg = async (scopes: readonly Scope[] = SCOPES) => {
      orgSeq += 1;
      const org = await t.createOrg(`org-${orgSeq}`);
      const { key } = await t.issueKey(scopes, { org });
      return { org, who: { org: org.slug, key } satisfies Who };
    };

    beforeAll(async () => {
      t = await startTestApp(kind, { now: () => clock });
      ctx = t.app.drover.ctx;
      runnerId = await insertRunner(t.org.id);
      const bare = await t.createOrg('bare');
      bareKey = (await t.issueKey(SCOPES, { org: bare })).key;
    });
    afterAll(async () => {
      await t?.close();
    });
    beforeEach(async () => {
      await t.store.db.updateTable('runners').set({ last_heartbeat_at: clock }).execute();
    });

    describe('POST /loops', () => {
      it('→ 201 {loop} with every field of docs/api.md and its defaults', async () => {
        const res = await call('POST', '/loops', { name: 'Nightly', prompt_template: 'Run the nightly checks' });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.headers['content-type']).toMatch(/^application\/json\b/);
        const body = res.json() as { loop: LoopJson };
        expect(Object.keys(body)).toEqual(['loop']);
        expect(Object.keys(body.loop).sort()).toEqual(LOOP_KEYS);
        expect(body.loop).toEqual({
          id: expect.any(Number),
          slug: 'nightly',
          name: 'Nightly',
          description: null,
          agent_slug: 'claude-code',
          custom_agent_slug: null,
          prompt_template: 'Run the nightly checks',
          prompt_variables: {},
          repository_id: null,
          runner_id: null,
          branch_name: null,
          execution_mode: 'autopilot',
          cron_expression: null,
          cron_timezone: 'UTC',
          sandbox_strategy: 'persistent',
          session_persistence: true,
          concurrency_policy: 'skip',
          max_concurrent_runs: 1,
          timeout_minutes: 60,
          callback_url: null,
          callback_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{20,}$/),
          autopilot_config: { max_iterations: 10, iteration_timeout_sec: 600 },
          agentfile_layer: null,
          runner_labels: [],
          preset: null,
          budget_usd_per_day: null,
          spent_usd_today: 0,
          status: 'enabled',
          next_run_at: null,
          last_run_at: null,
          total_runs: 0,
          successful_runs: 0,
          failed_runs: 0,
          cancelled_runs: 0,
          active_run_count: 0,
          total_cost_usd: null,
          created_at: iso(clock),
          updated_at: iso(clock),
        });
        // GET returns the same record.
        expect(await getLoop('nightly')).toEqual(body.loop);
      });

      it('shows callback_secret to loops:write keys only; each loop has its own', async () => {
        const a = await loop();
        const b = await loop();
        expect(a.callback_secret).toMatch(/^whsec_/);
        expect(b.callback_secret).toMatch(/^whsec_/);
        expect(a.callback_secret).not.toBe(b.callback_secret);
        const reader = (await t.issueKey(['loops:read'])).key;
        const writer = (await t.issueKey(['loops:write'])).key;
        const asReader = await getLoop(a.slug, { key: reader });
        expect(asReader).not.toHaveProperty('callback_secret');
        expect(Object.keys(asReader).sort()).toEqual(LOOP_KEYS.filter((k) => k !== 'callback_secret'));
        expect((await getLoop(a.slug, { key: writer })).callback_secret).toBe(a.callback_secret);
        const listed = (await call('GET', '/loops', undefined, { key: reader })).json() as { loops: LoopJson[] };
        expect(listed.loops.length).toBeGreaterThan(0);
        for (const l of listed.loops) expect(l).not.toHaveProperty('callback_secret');
        const listedW = (await call('GET', '/loops', undefined, { key: writer })).json() as { loops: LoopJson[] };
        for (const l of listedW.loops) expect(l.callback_secret).toMatch(/^whsec_/);
        // The secret is stored encrypted, not in clear.
        const row = await t.store.db.selectFrom('loops').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
        expect(JSON.stringify(row)).not.toContain(a.callback_secret!);
      });

      it('keeps every given field', async () => {
        const repo = await admin('POST', '/orgs/acme/repositories', { name: 'web', full_name: 'acme/web', provider: 'git', url: 'https://example.com/acme/web.git' });
        expect(repo.statusCode, repo.body).toBe(201);
        const repositoryId = (repo.json() as { repository: { id: number } }).repository.id;
        const body = {
          name: 'Full',
          slug: 'full',
          description: 'All the fields',
          agent_slug: 'codex',
          prompt_template: 'Fix {{ issue }} in {{repo}}',
          prompt_variables: { issue: 'bugs', repo: { name: 'web' }, n: 3 },
          repository_id: repositoryId,
          runner_id: runnerId,
          branch_name: 'main',
          execution_mode: 'direct',
          cron_expression: '30 9 * * MON-FRI',
          cron_timezone: 'Europe/Berlin',
          sandbox_strategy: 'fresh',
          session_persistence: false,
          concurrency_policy: 'queue',
          max_concurrent_runs: 100,
          timeout_minutes: 10_080,
          callback_url: 'https://hooks.example.com/drover?x=1',
          autopilot_config: { max_iterations: 3, iteration_timeout_sec: 120 },
        };
        const created = await create(body);
        const { slug: _slug, ...rest } = body;
        expect(created).toMatchObject({ ...rest, slug: 'full', custom_agent_slug: null, status: 'enabled' });
        // 2026-11-23 is a Monday; 09:30 in Berlin (CET, UTC+1) is 08:30Z.
        expect(created.next_run_at).toBe('2026-11-23T08:30:00.000Z');
        const partialAutopilot = await loop({ autopilot_config: { max_iterations: 2 } });
        expect(partialAutopilot.autopilot_config).toEqual({ max_iterations: 2, iteration_timeout_sec: 600 });
      });

      it('accepts a custom agent', async () => {
        const agent = await admin('POST', '/orgs/acme/agents', { slug: 'my-bot', name: 'My bot', command: 'my-bot' });
        expect(agent.statusCode, agent.body).toBe(201);
        const created = await loop({ agent_slug: undefined, custom_agent_slug: 'my-bot' });
        expect(created).toMatchObject({ agent_slug: null, custom_agent_slug: 'my-bot' });
      });

      it('accepts the boundary values', async () => {
        const created = await loop({ name: 'n'.repeat(255), max_concurrent_runs: 1, timeout_minutes: 1 });
        expect(created.name).toBe('n'.repeat(255));
        const other = await loop({ name: 'x', max_concurrent_runs: 100, timeout_minutes: 10_080 });
        expect(other).toMatchObject({ max_concurrent_runs: 100, timeout_minutes: 10_080 });
      });

      it('derives slugs from names: lower-case, dashes, -2/-3 on collisions, `loop` when empty; names need not be unique', async () => {
        const { who } = await freshOrg();
        expect((await create({ name: 'My Loop!', prompt_template: 'x' }, who)).slug).toBe('my-loop');
        expect((await create({ name: 'My Loop!', prompt_template: 'x' }, who)).slug).toBe('my-loop-2');
        expect((await create({ name: 'my  loop', prompt_template: 'x' }, who)).slug).toBe('my-loop-3');
        expect((await create({ name: '--Deploy__Prod / EU--', prompt_template: 'x' }, who)).slug).toBe('deploy-prod-eu');
        expect((await create({ name: '!!!', prompt_template: 'x' }, who)).slug).toBe('loop');
        expect((await create({ name: '日本語', prompt_template: 'x' }, who)).slug).toBe('loop-2');
        expect((await create({ name: 'Straße 42', prompt_template: 'x' }, who)).slug).toBe('stra-e-42');
        // An explicit slug is used as given; a later derived slug steps over it.
        expect((await create({ name: 'Other', slug: 'my-loop-4', prompt_template: 'x' }, who)).slug).toBe('my-loop-4');
        expect((await create({ name: 'My Loop', prompt_template: 'x' }, who)).slug).toBe('my-loop-5');
      });

      it('an explicit slug already taken → 409 ALREADY_EXISTS, nothing written', async () => {
        const first = await loop();
        const before = await counts();
        const res = await call('POST', '/loops', { name: 'Again', slug: first.slug, prompt_template: 'x' });
        expectError(res, 409, 'ALREADY_EXISTS');
        expect(await counts()).toEqual(before);
        // The same slug in another organization is fine.
        const { who } = await freshOrg();
        expect((await create({ name: 'Again', slug: first.slug, prompt_template: 'x' }, who)).slug).toBe(first.slug);
      });

      it('long names give slugs of at most 63 characters, also when they collide', async () => {
        const { who } = await freshOrg();
        const name = 'A'.repeat(70);
        const slugs: string[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await Promise.race([
            call('POST', '/loops', { name, prompt_template: 'x' }, who),
            new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000)),
          ]);
          expect(res, `create #${i + 1} did not answer within 5 s`).not.toBeNull();
          expect(res!.statusCode, res!.body).toBe(201);
          slugs.push((res!.json() as { loop: LoopJson }).loop.slug);
        }
        expect(slugs).toEqual(['a'.repeat(63), `${'a'.repeat(61)}-2`, `${'a'.repeat(61)}-3`, `${'a'.repeat(61)}-4`]);
        // A name whose 63rd character falls on a dash: the dash is trimmed.
        const dashed = `${'b'.repeat(62)} tail`;
        expect((await create({ name: dashed, prompt_template: 'x' }, who)).slug).toBe('b'.repeat(62));
      });

      describe('validation: 400 naming the field, nothing written', () => {
        const base = { name: 'V', prompt_template: 'x' };
        const cases: [string, Record<string, unknown>, string, RegExp?][] = [
          ['no name', { prompt_template: 'x' }, '/name'],
          ['empty name', { ...base, name: '' }, '/name'],
          ['blank name', { ...base, name: '   ' }, '/name'],
          ['name of 256 characters', { ...base, name: 'n'.repeat(256) }, '/name'],
          ['name not a string', { ...base, name: 3 }, '/name', /name must be a string/],
          ['no prompt_template', { name: 'x' }, '/prompt_template'],
          ['empty prompt_template', { ...base, prompt_template: '' }, '/prompt_template'],
          ['agent_slug and custom_agent_slug', { ...base, agent_slug: 'shell', custom_agent_slug: 'my-bot' }, '/custom_agent_slug'],
          ['unknown agent_slug', { ...base, agent_slug: 'nope' }, '/agent_slug'],
          ['a custom agent named as agent_slug', { ...base, agent_slug: 'my-bot' }, '/agent_slug'],
          ['unknown custom_agent_slug', { ...base, custom_agent_slug: 'ghost' }, '/custom_agent_slug'],
          ['agent_slug a number (as the spec example sends it)', { ...base, agent_slug: 3 }, '/agent_slug', /agent_slug must be a string/],
          ['unknown repository_id', { ...base, repository_id: 987_654 }, '/repository_id'],
          ['unknown runner_id', { ...base, runner_id: 987_654 }, '/runner_id'],
          ['six-field cron', { ...base, cron_expression: '0 * * * * *' }, '/cron_expression', /five fields.*seconds/],
          ['seven-field cron', { ...base, cron_expression: '0 0 * * * * 2030' }, '/cron_expression', /five fields/],
          ['four-field cron', { ...base, cron_expression: '* * * *' }, '/cron_expression', /five fields/],
          ['cron minute 61', { ...base, cron_expression: '61 * * * *' }, '/cron_expression', /cron_expression is not a valid cron expression/],
          ['cron garbage', { ...base, cron_expression: 'every day at noon' }, '/cron_expression', /cron_expression/],
          ['cron @hourly', { ...base, cron_expression: '@hourly' }, '/cron_expression', /nicknames.*0 \* \* \* \*/],
          ['cron that never fires', { ...base, cron_expression: '0 0 30 2 *' }, '/cron_expression', /never fires/],
          ['empty cron', { ...base, cron_expression: '' }, '/cron_expression'],
          ['bad timezone with a cron', { ...base, cron_expression: '0 * * * *', cron_timezone: 'Mars/Olympus' }, '/cron_timezone', /IANA/],
          ['offset timezone with a cron', { ...base, cron_expression: '0 * * * *', cron_timezone: '+01:00' }, '/cron_timezone', /IANA/],
          ['max_concurrent_runs 0', { ...base, max_concurrent_runs: 0 }, '/max_concurrent_runs'],
          ['max_concurrent_runs 101', { ...base, max_concurrent_runs: 101 }, '/max_concurrent_runs'],
          ['max_concurrent_runs 1.5', { ...base, max_concurrent_runs: 1.5 }, '/max_concurrent_runs'],
          ['timeout_minutes 0', { ...base, timeout_minutes: 0 }, '/timeout_minutes'],
          ['timeout_minutes 10081', { ...base, timeout_minutes: 10_081 }, '/timeout_minutes'],
          ['callback_url ftp', { ...base, callback_url: 'ftp://example.com/x' }, '/callback_url'],
          ['callback_url javascript:', { ...base, callback_url: 'javascript:alert(1)' }, '/callback_url'],
          ['callback_url relative', { ...base, callback_url: '/hooks' }, '/callback_url'],
          ['callback_url without host', { ...base, callback_url: 'http://' }, '/callback_url'],
          ['execution_mode', { ...base, execution_mode: 'manual' }, '/execution_mode'],
          ['sandbox_strategy', { ...base, sandbox_strategy: 'shared' }, '/sandbox_strategy'],
          ['concurrency_policy', { ...base, concurrency_policy: 'drop' }, '/concurrency_policy'],
          ['session_persistence "true"', { ...base, session_persistence: 'true' }, '/session_persistence'],
          ['prompt_variables an array', { ...base, prompt_variables: ['a'] }, '/prompt_variables'],
          ['autopilot_config unknown key', { ...base, autopilot_config: { max_iterations: 2, loops: 1 } }, '/autopilot_config/loops'],
          ['autopilot_config max_iterations 0', { ...base, autopilot_config: { max_iterations: 0 } }, '/autopilot_config/max_iterations'],
          ['slug with capitals', { ...base, slug: 'My-Loop' }, '/slug'],
          ['slug of 64 characters', { ...base, slug: 's'.repeat(64) }, '/slug'],
          ['unknown field', { ...base, schedule: '0 * * * *' }, '/schedule', /schedule is not a known field/],
          ['status is not writable', { ...base, status: 'disabled' }, '/status'],
        ];
        it.each(cases)('%s', async (_label, payload, field, message) => {
          const before = await counts();
          const body = expectInvalid(await call('POST', '/loops', payload), field);
          if (message) expect(body.error + JSON.stringify(body.details)).toMatch(message);
          expect(await counts()).toEqual(before);
        });

        it('a repository or runner of another organization is unknown here', async () => {
          const { org } = await freshOrg();
          const theirRunner = await insertRunner(org.id);
          const repo = await admin('POST', `/orgs/${org.slug}/repositories`, { name: 'x', full_name: 'o/x', provider: 'git', url: 'https://example.com/o/x.git' });
          expect(repo.statusCode, repo.body).toBe(201);
          const before = await counts();
          expectInvalid(await call('POST', '/loops', { ...base, runner_id: theirRunner }), '/runner_id');
          expectInvalid(await call('POST', '/loops', { ...base, repository_id: (repo.json() as { repository: { id: number } }).repository.id }), '/repository_id');
          expect(await counts()).toEqual(before);
        });

        it('a bad cron_timezone is 400 even without a cron_expression', async () => {
          const before = await counts();
          expectInvalid(await call('POST', '/loops', { ...base, cron_timezone: 'Mars/Olympus' }), '/cron_timezone');
          expect(await counts()).toEqual(before);
        });
      });
    });

    describe('next_run_at', () => {
      it('is set for an enabled cron loop, cleared on disable, recomputed from now on enable', async () => {
        const created = await loop({ cron_expression: '0 * * * *' });
        expect(created.next_run_at).toBe(iso(Math.floor(clock / 3_600_000) * 3_600_000 + 3_600_000));
        expect(Date.parse(created.next_run_at!)).toBeGreaterThan(clock);
        const disabled = await call('POST', `/loops/${created.slug}/disable`);
        expect((disabled.json() as { loop: LoopJson }).loop).toMatchObject({ status: 'disabled', next_run_at: null });
        await advance(3 * 3_600_000 + 17 * 60_000);
        const enabled = await call('POST', `/loops/${created.slug}/enable`);
        const after = (enabled.json() as { loop: LoopJson }).loop;
        expect(after.status).toBe('enabled');
        expect(after.next_run_at).toBe(iso(Math.floor(clock / 3_600_000) * 3_600_000 + 3_600_000));
        // A loop without cron never has one.
        expect((await loop()).next_run_at).toBeNull();
      });

      it('follows PUT: a new cron or timezone recomputes it, null clears it, a disabled loop gets none', async () => {
        const l = await loop({ cron_expression: '0 0 * * *' });
        const midnight = Math.floor(clock / 86_400_000) * 86_400_000 + 86_400_000;
        expect(l.next_run_at).toBe(iso(midnight));
        const put = async (body: Record<string, unknown>) => {
          const res = await call('PUT', `/loops/${l.slug}`, body);
          expect(res.statusCode, res.body).toBe(200);
          return (res.json() as { loop: LoopJson }).loop;
        };
        // Midnight in New York (EST in November) is 05:00Z.
        const fiveZ = 5 * 3_600_000;
        expect((await put({ cron_timezone: 'America/New_York' })).next_run_at).toBe(iso(Math.floor((clock - fiveZ) / 86_400_000) * 86_400_000 + 86_400_000 + fiveZ));
        expect((await put({ description: 'unrelated' })).next_run_at).not.toBeNull();
        expect((await put({ cron_expression: null })).next_run_at).toBeNull();
        await call('POST', `/loops/${l.slug}/disable`);
        expect((await put({ cron_expression: '*/5 * * * *' })).next_run_at).toBeNull();
        const enabled = (await call('POST', `/loops/${l.slug}/enable`)).json() as { loop: LoopJson };
        expect(enabled.loop.next_run_at).toBe(iso(Math.floor(clock / 300_000) * 300_000 + 300_000));
      });
    });

    describe('GET /loops', () => {
      it('lists the org\'s loops newest first as {loops, total}; limit/offset page them', async () => {
        const { who } = await freshOrg();
        const empty = await call('GET', '/loops', undefined, who);
        expect(empty.statusCode).toBe(200);
        expect(empty.json()).toEqual({ loops: [], total: 0 });
        const slugs: string[] = [];
        for (let i = 0; i < 5; i++) {
          slugs.push((await create({ name: `L${i}`, prompt_template: 'x' }, who)).slug);
          await advance(1_000);
        }
        // Two created in the same millisecond: the later id comes first.
        slugs.push((await create({ name: 'Same A', prompt_template: 'x' }, who)).slug);
        slugs.push((await create({ name: 'Same B', prompt_template: 'x' }, who)).slug);
        const newestFirst = [...slugs].reverse();
        const all = (await call('GET', '/loops', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(Object.keys(all).sort()).toEqual(['loops', 'total']);
        expect(all.total).toBe(7);
        expect(all.loops.map((l) => l.slug)).toEqual(newestFirst);
        expect(Object.keys(all.loops[0]).sort()).toEqual(LOOP_KEYS);
        const page = (await call('GET', '/loops?limit=2&offset=1', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(page.total).toBe(7);
        expect(page.loops.map((l) => l.slug)).toEqual(newestFirst.slice(1, 3));
        const limitOnly = (await call('GET', '/loops?limit=3', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(limitOnly.total).toBe(7);
        expect(limitOnly.loops.map((l) => l.slug)).toEqual(newestFirst.slice(0, 3));
        const offsetOnly = (await call('GET', '/loops?offset=5', undefined, who)).json() as { loops: LoopJson[] };
        expect(offsetOnly.loops.map((l) => l.slug)).toEqual(newestFirst.slice(5));
        const beyond = (await call('GET', '/loops?offset=50', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(beyond).toEqual({ loops: [], total: 7 });
        // Another organization's loops never show.
        const acme = (await call('GET', '/loops')).json() as { loops: LoopJson[] };
        expect(acme.loops.some((l) => slugs.includes(l.slug) && l.name.startsWith('L'))).toBe(false);
      });

      it('without limit/offset returns all loops, also more than 100; limit above 100 is clamped', async () => {
        const { org, who } = await freshOrg();
        const now = clock;
        await t.store.db
          .insertInto('loops')
          .values(
            Array.from({ length: 105 }, (_, i) => ({
              org_id: org.id,
              slug: `bulk-${i}`,
              name: `Bulk ${i}`,
              description: null,
              agent_slug: 'shell',
              custom_agent_slug: null,
              prompt_template: 'x',
              prompt_variables: '{}',
              repository_id: null,
              runner_id: null,
              branch_name: null,
              execution_mode: 'autopilot' as const,
              cron_expression: null,
              cron_timezone: 'UTC',
              sandbox_strategy: 'persistent' as const,
              session_persistence: 1,
              concurrency_policy: 'skip' as const,
              max_concurrent_runs: 1,
              timeout_minutes: 60,
              callback_url: null,
              callback_secret_encrypted: t.secrets.encrypt('whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ='),
              autopilot_config: '{"max_iterations":10,"iteration_timeout_sec":600}',
              status: 'enabled' as const,
              next_run_at: null,
              run_counter: 0,
              sandbox_runner_id: null,
              last_session_id: null,
              created_at: now + i,
              updated_at: now + i,
            })),
          )
          .execute();
        const all = (await call('GET', '/loops', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(all.total).toBe(105);
        expect(all.loops).toHaveLength(105);
        expect(all.loops[0].slug).toBe('bulk-104');
        const clamped = (await call('GET', '/loops?limit=1000', undefined, who)).json() as { loops: LoopJson[]; total: number };
        expect(clamped.total).toBe(105);
        expect(clamped.loops).toHaveLength(100);
      });
    });

    describe('GET /loops/:slug', () => {
      it('404 for an unknown slug and for a slug of another organization', async () => {
        expectError(await call('GET', '/loops/no-such-loop'), 404, 'NOT_FOUND');
        const { who } = await freshOrg();
        const theirs = await create({ name: 'Only theirs', slug: 'only-theirs', prompt_template: 'x' }, who);
        expectError(await call('GET', `/loops/${theirs.slug}`), 404, 'NOT_FOUND');
        expect((await getLoop(theirs.slug, who)).id).toBe(theirs.id);
      });
    });

    describe('PUT /loops/:slug', () => {
      it('changes only the given fields; updated_at moves, created_at and slug stay', async () => {
        const l = await loop({ description: 'before', prompt_variables: { a: 1 }, cron_expression: '0 * * * *', callback_url: 'https://example.com/h' });
        await advance(5_000);
        const res = await call('PUT', `/loops/${l.slug}`, { description: 'after', name: 'Renamed' });
        expect(res.statusCode, res.body).toBe(200);
        const updated = (res.json() as { loop: LoopJson }).loop;
        expect(updated).toEqual({ ...l, description: 'after', name: 'Renamed', updated_at: iso(clock) });
        expect(await getLoop(l.slug)).toEqual(updated);
        // Every field on its own.
        const changes: Record<string, unknown>[] = [
          { prompt_template: 'new {{ thing }}' },
          { prompt_variables: { thing: 'x' } },
          { branch_name: 'dev' },
          { execution_mode: 'direct' },
          { sandbox_strategy: 'fresh' },
          { session_persistence: false },
          { concurrency_policy: 'replace' },
          { max_concurrent_runs: 7 },
          { timeout_minutes: 5 },
          { callback_url: 'http://example.org/other' },
          { runner_id: runnerId },
        ];
        let current = updated;
        for (const change of changes) {
          const r = await call('PUT', `/loops/${l.slug}`, change);
          expect(r.statusCode, r.body).toBe(200);
          const next = (r.json() as { loop: LoopJson }).loop;
          expect(next).toEqual({ ...current, ...change });
          current = next;
        }
        // prompt_variables is replaced as a whole; autopilot_config merges its two keys.
        const merged = (await call('PUT', `/loops/${l.slug}`, { autopilot_config: { max_iterations: 4 } })).json() as { loop: LoopJson };
        expect(merged.loop.autopilot_config).toEqual({ max_iterations: 4, iteration_timeout_sec: 600 });
        expect(merged.loop.prompt_variables).toEqual({ thing: 'x' });
        // An empty body changes nothing but updated_at.
        const same = (await call('PUT', `/loops/${l.slug}`, {})).json() as { loop: LoopJson };
        expect(same.loop).toEqual(merged.loop);
        // The callback secret survives updates.
        expect(same.loop.callback_secret).toBe(l.callback_secret);
      });

      it('null clears the optional fields', async () => {
        const repo = await admin('POST', '/orgs/acme/repositories', { name: 'api', full_name: 'acme/api', provider: 'git', url: 'https://example.com/acme/api.git' });
        const repositoryId = (repo.json() as { repository: { id: number } }).repository.id;
        const l = await loop({
          description: 'd',
          repository_id: repositoryId,
          runner_id: runnerId,
          branch_name: 'b',
          cron_expression: '0 * * * *',
          callback_url: 'https://example.com/h',
        });
        const res = await call('PUT', `/loops/${l.slug}`, { description: null, repository_id: null, runner_id: null, branch_name: null, cron_expression: null, callback_url: null });
        expect(res.statusCode, res.body).toBe(200);
        expect((res.json() as { loop: LoopJson }).loop).toMatchObject({
          description: null,
          repository_id: null,
          runner_id: null,
          branch_name: null,
          cron_expression: null,
          next_run_at: null,
          callback_url: null,
        });
      });

      it('switches between a built-in and a custom agent; both → 400; neither → the default agent', async () => {
        await admin('POST', '/orgs/acme/agents', { slug: 'switch-bot', name: 'Switch bot', command: 'switch-bot' });
        const l = await loop({ agent_slug: 'shell' });
        const put = (body: Record<string, unknown>) => call('PUT', `/loops/${l.slug}`, body);
        let res = await put({ custom_agent_slug: 'switch-bot' });
        expect((res.json() as { loop: LoopJson }).loop).toMatchObject({ agent_slug: null, custom_agent_slug: 'switch-bot' });
        res = await put({ agent_slug: 'codex' });
        expect((res.json() as { loop: LoopJson }).loop).toMatchObject({ agent_slug: 'codex', custom_agent_slug: null });
        res = await put({ agent_slug: null, custom_agent_slug: 'switch-bot' });
        expect((res.json() as { loop: LoopJson }).loop).toMatchObject({ agent_slug: null, custom_agent_slug: 'switch-bot' });
        res = await put({ custom_agent_slug: null });
        expect((res.json() as { loop: LoopJson }).loop).toMatchObject({ agent_slug: 'claude-code', custom_agent_slug: null });
        const before = await getLoop(l.slug);
        expectInvalid(await put({ agent_slug: 'shell', custom_agent_slug: 'switch-bot' }), '/custom_agent_slug');
        expectInvalid(await put({ agent_slug: 'nope' }), '/agent_slug');
        expectInvalid(await put({ custom_agent_slug: 'ghost' }), '/custom_agent_slug');
        expect(await getLoop(l.slug)).toEqual(before);
      });

      it('validates like create; a rejected PUT changes nothing', async () => {
        const l = await loop({ cron_expression: '0 * * * *' });
        const bad: [Record<string, unknown>, string][] = [
          [{ name: '' }, '/name'],
          [{ name: null }, '/name'],
          [{ name: 'n'.repeat(256) }, '/name'],
          [{ prompt_template: null }, '/prompt_template'],
          [{ max_concurrent_runs: 0 }, '/max_concurrent_runs'],
          [{ max_concurrent_runs: 101 }, '/max_concurrent_runs'],
          [{ timeout_minutes: 0 }, '/timeout_minutes'],
          [{ timeout_minutes: 10_081 }, '/timeout_minutes'],
          [{ cron_expression: '* * * * * *' }, '/cron_expression'],
          [{ cron_expression: '@daily' }, '/cron_expression'],
          [{ cron_timezone: 'Nowhere/Land' }, '/cron_timezone'],
          [{ cron_timezone: null }, '/cron_timezone'],
          [{ callback_url: 'mailto:a@b.c' }, '/callback_url'],
          [{ repository_id: 424_242 }, '/repository_id'],
          [{ runner_id: 424_242 }, '/runner_id'],
          [{ slug: 'new-slug' }, '/slug'],
          [{ status: 'disabled' }, '/status'],
          [{ agent_slug: 3 }, '/agent_slug'],
          [{ prompt_variables: null }, '/prompt_variables'],
          [{ session_persistence: null }, '/session_persistence'],
        ];
        const before = await getLoop(l.slug);
        for (const [body, field] of bad) expectInvalid(await call('PUT', `/loops/${l.slug}`, body), field);
        expect(await getLoop(l.slug)).toEqual(before);
        expectError(await call('PUT', '/loops/no-such-loop', { description: 'x' }), 404, 'NOT_FOUND');
      });

      it('a bad cron_timezone is 400 even on a loop without cron', async () => {
        const l = await loop();
        expectInvalid(await call('PUT', `/loops/${l.slug}`, { cron_timezone: 'Mars/Olympus' }), '/cron_timezone');
        expect((await getLoop(l.slug)).cron_timezone).toBe('UTC');
      });
    });

    describe('enable / disable', () => {
      it('are idempotent: 200 {loop} both times', async () => {
        const l = await loop();
        for (const action of ['disable', 'disable', 'enable', 'enable', 'disable'] as const) {
          const res = await call('POST', `/loops/${l.slug}/${action}`);
          expect(res.statusCode, res.body).toBe(200);
          const body = res.json() as { loop: LoopJson };
          expect(Object.keys(body)).toEqual(['loop']);
          expect(body.loop.status).toBe(action === 'enable' ? 'enabled' : 'disabled');
          expect(Object.keys(body.loop).sort()).toEqual(LOOP_KEYS);
        }
        expectError(await call('POST', '/loops/no-such-loop/enable'), 404, 'NOT_FOUND');
        expectError(await call('POST', '/loops/no-such-loop/disable'), 404, 'NOT_FOUND');
      });

      it('disable cancels the queued runs (active ones go on) and blocks manual triggers with 409 LOOP_DISABLED', async () => {
        const l = await loop({ concurrency_policy: 'queue' });
        const first = await trigger(l.slug);
        const second = await trigger(l.slug);
        const third = await trigger(l.slug);
        expect([first.status, second.status, third.status]).toEqual(['pending', 'queued', 'queued']);
        const disabled = (await call('POST', `/loops/${l.slug}/disable`)).json() as { loop: LoopJson };
        expect(disabled.loop).toMatchObject({ status: 'disabled', active_run_count: 1, total_runs: 3 });
        expect((await getRun(l.slug, first.id)).status).toBe('pending');
        for (const id of [second.id, third.id]) {
          const run = await getRun(l.slug, id);
          expect(run).toMatchObject({ status: 'cancelled', pod_key: null, finished_at: iso(clock) });
          expect(run.error_message).toMatch(/disabled/);
        }
        const before = await counts();
        const blocked = expectError(await call('POST', `/loops/${l.slug}/trigger`), 409, 'LOOP_DISABLED');
        expect(blocked.error).toContain(l.slug);
        expectError(await call('POST', `/loops/${l.slug}/trigger`, { variables: { a: 1 } }), 409, 'LOOP_DISABLED');
        expect(await counts()).toEqual(before);
        // The active run still ends normally; nothing is promoted.
        await finishPod(first.pod_key!, 'completed');
        expect((await getRun(l.slug, first.id)).status).toBe('completed');
        expect((await allRuns(l.slug)).filter((r) => ['queued', 'pending', 'running'].includes(r.status))).toEqual([]);
        await call('POST', `/loops/${l.slug}/enable`);
        const again = await trigger(l.slug);
        expect(again).toMatchObject({ status: 'pending', run_number: 4 });
      });
    });

    describe('POST /loops/:slug/trigger', () => {
      it('without a runner: 201 {run} pending, waiting for a runner, with the full run record', async () => {
        const who = { org: 'bare', key: bareKey };
        const l = await create({ name: 'Waits', prompt_template: 'Say {{ word }}', prompt_variables: { word: 'hello' } }, who);
        const res = await t.request({ method: 'POST', url: url(`/loops/${l.slug}/trigger`, 'bare'), key: bareKey });
        expect(res.statusCode, res.body).toBe(201);
        const body = res.json() as { run: RunJson };
        expect(Object.keys(body)).toEqual(['run']);
        expect(Object.keys(body.run).sort()).toEqual(RUN_KEYS);
        expect(body.run).toEqual({
          id: expect.any(Number),
          loop_id: l.id,
          loop_slug: l.slug,
          run_number: 1,
          status: 'pending',
          trigger_type: 'manual',
          variables: {},
          resolved_prompt: 'Say hello',
          pod_key: null,
          delivery: null,
          runner_id: null,
          scheduled_at: null,
          started_at: iso(clock),
          finished_at: null,
          duration_sec: null,
          error_message: expect.stringMatching(/^waiting for a runner/),
          result: null,
          session_id: null,
          usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null, turns: null },
          callback_status: 'none',
          triggered_by: { type: 'api_key', id: expect.any(Number), name: expect.any(String) },
          created_at: iso(clock),
          updated_at: iso(clock),
        });
        expect(await getRun(l.slug, body.run.id, who)).toEqual(body.run);
        expect(await getLoop(l.slug, who)).toMatchObject({ total_runs: 1, active_run_count: 1, last_run_at: iso(clock) });
        // skip policy, max 1: the waiting run holds the slot.
        const second = await trigger(l.slug, undefined, who);
        expect(second).toMatchObject({ status: 'skipped', run_number: 2, pod_key: null, started_at: null, finished_at: iso(clock) });
      });

      it('with a runner: the run gets a pod built from the loop', async () => {
        const l = await loop({ prompt_template: 'do {{x}}', prompt_variables: { x: 'it' }, execution_mode: 'direct', branch_name: 'feat', agent_slug: 'shell' });
        const run = await trigger(l.slug);
        expect(run).toMatchObject({ status: 'pending', runner_id: runnerId, error_message: null, resolved_prompt: 'do it' });
        expect(run.pod_key).toEqual(expect.any(String));
        const pod = await podRow(run.pod_key!);
        expect(pod).toMatchObject({ status: 'initializing', agent_slug: 'shell', prompt: 'do it', mode: 'direct', branch: 'feat', runner_id: runnerId });
        // The pod starting moves the run to running; its end completes it.
        await advance(1_000);
        await podStarted(ctx, runnerId, run.pod_key!);
        expect((await getRun(l.slug, run.id)).status).toBe('running');
        await advance(89_500);
        await finishPod(run.pod_key!, 'completed');
        const done = await getRun(l.slug, run.id);
        expect(done).toMatchObject({ status: 'completed', started_at: run.started_at, finished_at: iso(clock), duration_sec: 90.5, callback_status: 'none' });
        expect(done.error_message).toBeNull();
      });

      it('a failed pod fails the run', async () => {
        const l = await loop();
        const run = await trigger(l.slug);
        await finishPod(run.pod_key!, 'failed', 'exit status 3');
        const failed = await getRun(l.slug, run.id);
        expect(failed).toMatchObject({ status: 'failed', finished_at: iso(clock) });
        expect(failed.error_message).toContain('exit status 3');
      });

      it('accepts no body (no content-type), an empty JSON body and {}', async () => {
        const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 5 });
        const noBody = await t.request({ method: 'POST', url: url(`/loops/${l.slug}/trigger`) });
        expect(noBody.statusCode, noBody.body).toBe(201);
        const emptyJson = await t.request({ method: 'POST', url: url(`/loops/${l.slug}/trigger`), headers: { 'content-type': 'application/json' }, payload: '' });
        expect(emptyJson.statusCode, emptyJson.body).toBe(201);
        const emptyObject = await call('POST', `/loops/${l.slug}/trigger`, {});
        expect(emptyObject.statusCode, emptyObject.body).toBe(201);
        expect((await allRuns(l.slug)).map((r) => r.run_number)).toEqual([3, 2, 1]);
      });

      it('404 for an unknown loop, nothing written', async () => {
        const before = await counts();
        expectError(await call('POST', '/loops/no-such-loop/trigger'), 404, 'NOT_FOUND');
        expect(await counts()).toEqual(before);
      });

      describe('skip', () => {
        it('max 1: a second trigger while one is active is recorded as skipped, saying why', async () => {
          const l = await loop();
          const first = await trigger(l.slug);
          expect(first.status).toBe('pending');
          const before = await counts();
          const second = await trigger(l.slug);
          expect(second).toMatchObject({ status: 'skipped', run_number: 2, pod_key: null, runner_id: null, started_at: null, finished_at: iso(clock), duration_sec: null, callback_status: 'none' });
          expect(second.error_message).toMatch(/skip/);
          expect(await counts()).toEqual({ ...before, runs: before.runs + 1 });
          await finishPod(first.pod_key!, 'completed');
          expect((await trigger(l.slug)).status).toBe('pending');
        });

        it('max 3: three run at once, the fourth is skipped', async () => {
          const l = await loop({ max_concurrent_runs: 3 });
          const runs = [];
          for (let i = 0; i < 4; i++) runs.push(await trigger(l.slug));
          expect(runs.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'skipped']);
          expect(new Set(runs.slice(0, 3).map((r) => r.pod_key)).size).toBe(3);
          await finishPod(runs[1].pod_key!, 'completed');
          expect((await trigger(l.slug)).status).toBe('pending');
          expect((await trigger(l.slug)).status).toBe('skipped');
        });
      });

      describe('queue', () => {
        it('max 1: later triggers are queued and start first in first out as the slot frees', async () => {
          const l = await loop({ concurrency_policy: 'queue' });
          const a = await trigger(l.slug, { n: 1 });
          const b = await trigger(l.slug, { n: 2 });
          const c = await trigger(l.slug, { n: 3 });
          expect(a.status).toBe('pending');
          for (const q of [b, c]) expect(q).toMatchObject({ status: 'queued', pod_key: null, started_at: null, finished_at: null, error_message: null });
          expect(await getLoop(l.slug)).toMatchObject({ active_run_count: 3, total_runs: 3 });
          await advance(10_000);
          await finishPod(a.pod_key!, 'completed');
          const b1 = await getRun(l.slug, b.id);
          expect(b1).toMatchObject({ status: 'pending', started_at: iso(clock), runner_id: runnerId });
          expect(b1.pod_key).toEqual(expect.any(String));
          expect((await getRun(l.slug, c.id)).status).toBe('queued');
          await advance(10_000);
          await finishPod(b1.pod_key!, 'failed');
          const c1 = await getRun(l.slug, c.id);
          expect(c1).toMatchObject({ status: 'pending', started_at: iso(clock) });
          expect(c1.pod_key).toEqual(expect.any(String));
        });

        it('max 3: three start, the rest queue; each freed slot starts the oldest queued run', async () => {
          const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 3 });
          const runs = [];
          for (let i = 0; i < 6; i++) runs.push(await trigger(l.slug));
          expect(runs.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'queued', 'queued', 'queued']);
          // Cancelling a queued run does not start anything; cancelling an active one starts the oldest queued.
          expect((await call('POST', `/loops/${l.slug}/runs/${runs[3].id}/cancel`)).statusCode).toBe(200);
          expect((await getRun(l.slug, runs[4].id)).status).toBe('queued');
          expect((await call('POST', `/loops/${l.slug}/runs/${runs[0].id}/cancel`)).statusCode).toBe(200);
          expect((await getRun(l.slug, runs[4].id)).status).toBe('pending');
          expect((await getRun(l.slug, runs[5].id)).status).toBe('queued');
          await finishPod(runs[1].pod_key!, 'completed');
          expect((await getRun(l.slug, runs[5].id)).status).toBe('pending');
          expect(await getLoop(l.slug)).toMatchObject({ active_run_count: 3 });
        });

        it('holds at most 100 queued runs; beyond that the trigger is skipped', async () => {
          const l = await loop({ concurrency_policy: 'queue' });
          expect((await trigger(l.slug)).status).toBe('pending');
          for (let i = 0; i < 100; i++) expect((await trigger(l.slug)).status).toBe('queued');
          const over = await trigger(l.slug);
          expect(over).toMatchObject({ status: 'skipped', run_number: 102 });
          expect(over.error_message).toMatch(/100/);
          const queued = (await call('GET', `/loops/${l.slug}/runs?status=queued`)).json() as { total: number };
          expect(queued.total).toBe(100);
        });
      });

      describe('replace', () => {
        it('max 1: the active run is cancelled, its pod terminated, the new one starts', async () => {
          const l = await loop({ concurrency_policy: 'replace' });
          const first = await trigger(l.slug);
          expect(first.status).toBe('pending');
          await advance(2_000);
          const second = await trigger(l.slug);
          expect(second).toMatchObject({ status: 'pending', run_number: 2 });
          expect(second.pod_key).not.toBe(first.pod_key);
          const old = await getRun(l.slug, first.id);
          expect(old).toMatchObject({ status: 'cancelled', finished_at: iso(clock), duration_sec: 2 });
          expect(old.error_message).toMatch(/replaced/);
          expect(await podRow(first.pod_key!)).toMatchObject({ status: 'terminated', desired_state: 'stop' });
          expect(await podRow(second.pod_key!)).toMatchObject({ status: 'initializing' });
          expect(await getLoop(l.slug)).toMatchObject({ active_run_count: 1, total_runs: 2 });
        });

        it('max 3: the oldest active run makes way', async () => {
          const l = await loop({ concurrency_policy: 'replace', max_concurrent_runs: 3 });
          const runs = [];
          for (let i = 0; i < 3; i++) runs.push(await trigger(l.slug));
          await podStarted(ctx, runnerId, runs[0].pod_key!);
          const fourth = await trigger(l.slug);
          expect(fourth.status).toBe('pending');
          expect((await getRun(l.slug, runs[0].id)).status).toBe('cancelled');
          expect((await podRow(runs[0].pod_key!)).status).toBe('terminated');
          for (const r of runs.slice(1)) expect((await getRun(l.slug, r.id)).status).toBe('pending');
          const fifth = await trigger(l.slug);
          expect(fifth.status).toBe('pending');
          expect((await getRun(l.slug, runs[1].id)).status).toBe('cancelled');
          expect(await getLoop(l.slug)).toMatchObject({ active_run_count: 3, total_runs: 5 });
        });

        it('replaces a run still waiting for a runner too', async () => {
          const who = { org: 'bare', key: bareKey };
          const l = await create({ name: 'Replace waiting', prompt_template: 'x', concurrency_policy: 'replace' }, who);
          const first = await trigger(l.slug, undefined, who);
          const second = await trigger(l.slug, undefined, who);
          expect((await getRun(l.slug, first.id, who)).status).toBe('cancelled');
          expect(second.status).toBe('pending');
        });
      });

      describe('templates', () => {
        it('fills {{ name }} with spaces, defaults overridden by the trigger, non-strings as JSON, values never re-expanded', async () => {
          const l = await loop({
            prompt_template: 'A={{a}} B={{ b }} C={{\tc\t}} N={{n}} T={{t}} O={{o}} L={{l}} Z={{z}} dotted={{repo.name}} dash={{ticket-id}} again={{a}} lit=\\{{a}} {{ }}',
            prompt_variables: { a: 'default-a', b: 'default-b', c: 'c', n: 1, t: true, o: { k: [1, 'x'] }, l: [1, 2], z: null, 'repo.name': 'web', 'ticket-id': 'T-1' },
          });
          const run = await trigger(l.slug, { b: 'from trigger', n: 2.5, a: '{{c}} {{ missing }}' });
          expect(run.resolved_prompt).toBe('A={{c}} {{ missing }} B=from trigger C=c N=2.5 T=true O={"k":[1,"x"]} L=[1,2] Z=null dotted=web dash=T-1 again={{c}} {{ missing }} lit={{a}} {{ }}');
          expect(run.variables).toEqual({ b: 'from trigger', n: 2.5, a: '{{c}} {{ missing }}' });
          expect(run.status).toBe('pending');
        });

        it('missing values → 400 listing every name; no run recorded and no run number used', async () => {
          const l = await loop({ prompt_template: 'Fix {{ issue }} in {{repo}} on {{branch}} ({{issue}})', prompt_variables: { branch: 'main' } });
          const before = await counts();
          const res = await call('POST', `/loops/${l.slug}/trigger`, { variables: { other: 1 } });
          const body = expectError(res, 400, 'VALIDATION_FAILED');
          expect(body.error).toContain('issue');
          expect(body.error).toContain('repo');
          expect(body.error).not.toContain('branch');
          expect(body.details?.length).toBeGreaterThan(0);
          const noBody = expectError(await call('POST', `/loops/${l.slug}/trigger`), 400, 'VALIDATION_FAILED');
          expect(noBody.error).toMatch(/issue.*repo/);
          expect(await counts()).toEqual(before);
          // An explicit null is a value ("null"); the next good trigger is run 1.
          const run = await trigger(l.slug, { issue: 'bug 7', repo: null });
          expect(run).toMatchObject({ run_number: 1, resolved_prompt: 'Fix bug 7 in null on main (bug 7)' });
          expect(await getLoop(l.slug)).toMatchObject({ total_runs: 1 });
        });

        it('a template without placeholders ignores variables', async () => {
          const l = await loop({ prompt_template: 'plain' });
          expect((await trigger(l.slug, { unused: 'x' })).resolved_prompt).toBe('plain');
        });
      });
    });

    describe('runs', () => {
      it('GET /runs lists most recent first as {runs, total, limit, offset}; status filter; limit clamped to 100', async () => {
        const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 2 });
        const made: RunJson[] = [];
        for (let i = 0; i < 5; i++) {
          made.push(await trigger(l.slug, { i }));
          await advance(1_000);
        }
        const res = await call('GET', `/loops/${l.slug}/runs`);
        expect(res.statusCode, res.body).toBe(200);
        const page = res.json() as { runs: RunJson[]; total: number; limit: number; offset: number };
        expect(Object.keys(page).sort()).toEqual(['limit', 'offset', 'runs', 'total']);
        expect(page).toMatchObject({ total: 5, limit: 20, offset: 0 });
        expect(page.runs.map((r) => r.run_number)).toEqual([5, 4, 3, 2, 1]);
        for (const r of page.runs) expect(Object.keys(r).sort()).toEqual(RUN_KEYS);
        expect(page.runs[4]).toEqual(await getRun(l.slug, made[0].id));
        const second = (await call('GET', `/loops/${l.slug}/runs?limit=2&offset=1`)).json() as { runs: RunJson[]; total: number; limit: number; offset: number };
        expect(second).toMatchObject({ total: 5, limit: 2, offset: 1 });
        expect(second.runs.map((r) => r.run_number)).toEqual([4, 3]);
        const queued = (await call('GET', `/loops/${l.slug}/runs?status=queued`)).json() as { runs: RunJson[]; total: number };
        expect(queued.total).toBe(3);
        expect(queued.runs.map((r) => r.run_number)).toEqual([5, 4, 3]);
        const pending = (await call('GET', `/loops/${l.slug}/runs?status=pending&limit=1`)).json() as { runs: RunJson[]; total: number; limit: number };
        expect(pending).toMatchObject({ total: 2, limit: 1 });
        expect(pending.runs.map((r) => r.run_number)).toEqual([2]);
        const none = (await call('GET', `/loops/${l.slug}/runs?status=timeout`)).json() as { runs: RunJson[]; total: number };
        expect(none).toMatchObject({ runs: [], total: 0 });
        const clamped = (await call('GET', `/loops/${l.slug}/runs?limit=500`)).json() as { runs: RunJson[]; limit: number };
        expect(clamped.limit).toBe(100);
        expect(clamped.runs).toHaveLength(5);
        expectError(await call('GET', '/loops/no-such-loop/runs'), 404, 'NOT_FOUND');
      });

      it('GET /runs/:run_id: 404 for an unknown run or a run of another loop; 400 for a non-integer id', async () => {
        const a = await loop();
        const b = await loop();
        const runA = await trigger(a.slug);
        expect((await getRun(a.slug, runA.id)).id).toBe(runA.id);
        expectError(await call('GET', `/loops/${b.slug}/runs/${runA.id}`), 404, 'NOT_FOUND');
        expectError(await call('GET', `/loops/${a.slug}/runs/987654321`), 404, 'NOT_FOUND');
        expectError(await call('GET', `/loops/no-such-loop/runs/${runA.id}`), 404, 'NOT_FOUND');
        for (const bad of ['abc', '1.5', '0', '-1', '1e3', '0x10', '99999999999999999999']) {
          expectInvalid(await call('GET', `/loops/${a.slug}/runs/${bad}`), 'run_id');
        }
      });

      it('POST /cancel: 200 {message, run} cancelled, pod terminated; again → 409 RUN_NOT_ACTIVE; unknown → 404; non-integer → 400', async () => {
        const l = await loop();
        const run = await trigger(l.slug);
        await advance(3_000);
        const res = await call('POST', `/loops/${l.slug}/runs/${run.id}/cancel`);
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { message: string; run: RunJson };
        expect(Object.keys(body).sort()).toEqual(['message', 'run']);
        expect(body.message.length).toBeGreaterThan(0);
        expect(body.run).toMatchObject({ id: run.id, status: 'cancelled', finished_at: iso(clock), duration_sec: 3, pod_key: run.pod_key });
        expect(Object.keys(body.run).sort()).toEqual(RUN_KEYS);
        expect(await getRun(l.slug, run.id)).toEqual(body.run);
        expect(await podRow(run.pod_key!)).toMatchObject({ status: 'terminated', desired_state: 'stop' });
        const again = expectError(await call('POST', `/loops/${l.slug}/runs/${run.id}/cancel`), 409, 'RUN_NOT_ACTIVE');
        expect(again.error).toContain('cancelled');
        expect(await getRun(l.slug, run.id)).toEqual(body.run);
        expectError(await call('POST', `/loops/${l.slug}/runs/987654321/cancel`), 404, 'NOT_FOUND');
        expectError(await call('POST', `/loops/no-such-loop/runs/${run.id}/cancel`), 404, 'NOT_FOUND');
        for (const bad of ['abc', '0', '-3', '2.0']) expectInvalid(await call('POST', `/loops/${l.slug}/runs/${bad}/cancel`), 'run_id');
      });

      it('cancel: completed, failed and skipped runs are not active (409); a run of another loop is 404 and stays active', async () => {
        const l = await loop();
        const done = await trigger(l.slug);
        await finishPod(done.pod_key!, 'completed');
        expectError(await call('POST', `/loops/${l.slug}/runs/${done.id}/cancel`), 409, 'RUN_NOT_ACTIVE');
        const active = await trigger(l.slug);
        const skipped = await trigger(l.slug);
        expect(skipped.status).toBe('skipped');
        expectError(await call('POST', `/loops/${l.slug}/runs/${skipped.id}/cancel`), 409, 'RUN_NOT_ACTIVE');
        const other = await loop();
        expectError(await call('POST', `/loops/${other.slug}/runs/${active.id}/cancel`), 404, 'NOT_FOUND');
        expect((await getRun(l.slug, active.id)).status).toBe('pending');
        expect((await podRow(active.pod_key!)).status).toBe('initializing');
        await finishPod(active.pod_key!, 'failed');
        expectError(await call('POST', `/loops/${l.slug}/runs/${active.id}/cancel`), 409, 'RUN_NOT_ACTIVE');
      });

      it('cancel works on a running run and on a run still waiting for a runner', async () => {
        const l = await loop();
        const run = await trigger(l.slug);
        await podStarted(ctx, runnerId, run.pod_key!);
        expect((await getRun(l.slug, run.id)).status).toBe('running');
        const res = await call('POST', `/loops/${l.slug}/runs/${run.id}/cancel`);
        expect((res.json() as { run: RunJson }).run.status).toBe('cancelled');
        expect((await podRow(run.pod_key!)).status).toBe('terminated');
        const who = { org: 'bare', key: bareKey };
        const waiting = await create({ name: 'Waiting cancel', prompt_template: 'x' }, who);
        const w = await trigger(waiting.slug, undefined, who);
        const cancelled = await t.request({ method: 'POST', url: url(`/loops/${waiting.slug}/runs/${w.id}/cancel`, 'bare'), key: bareKey });
        expect(cancelled.statusCode, cancelled.body).toBe(200);
        expect((cancelled.json() as { run: RunJson }).run).toMatchObject({ status: 'cancelled', pod_key: null });
      });

      it('a run past its timeout becomes timeout and its pod is terminated', async () => {
        const l = await loop({ timeout_minutes: 1 });
        const run = await trigger(l.slug);
        await advance(59_000);
        await sweepRuns(ctx);
        expect((await getRun(l.slug, run.id)).status).toBe('pending');
        await advance(2_000);
        await sweepRuns(ctx);
        const timedOut = await getRun(l.slug, run.id);
        expect(timedOut).toMatchObject({ status: 'timeout', duration_sec: 61, finished_at: iso(clock) });
        expect(timedOut.error_message).toMatch(/timeout/);
        expect((await podRow(run.pod_key!)).status).toBe('terminated');
        expect(await getLoop(l.slug)).toMatchObject({ failed_runs: 1, active_run_count: 0 });
      });
    });

    describe('DELETE /loops/:slug', () => {
      it('cancels active runs (terminating their pods), removes the loop and its runs → 200 {message}, then 404', async () => {
        const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 2 });
        const runs: RunJson[] = [];
        for (let i = 0; i < 4; i++) runs.push(await trigger(l.slug));
        expect(runs.map((r) => r.status)).toEqual(['pending', 'pending', 'queued', 'queued']);
        await podStarted(ctx, runnerId, runs[1].pod_key!);
        const podsBefore = (await counts()).pods;
        const res = await call('DELETE', `/loops/${l.slug}`);
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { message: string };
        expect(Object.keys(body)).toEqual(['message']);
        expect(body.message.length).toBeGreaterThan(0);
        for (const r of runs.slice(0, 2)) expect(await podRow(r.pod_key!)).toMatchObject({ status: 'terminated', desired_state: 'stop' });
        // The queued runs are cancelled with the rest; none of them gets a pod on its way out.
        expect((await counts()).pods).toBe(podsBefore);
        expectError(await call('GET', `/loops/${l.slug}`), 404, 'NOT_FOUND');
        expectError(await call('GET', `/loops/${l.slug}/runs`), 404, 'NOT_FOUND');
        expectError(await call('GET', `/loops/${l.slug}/runs/${runs[0].id}`), 404, 'NOT_FOUND');
        expectError(await call('DELETE', `/loops/${l.slug}`), 404, 'NOT_FOUND');
        const left = await t.store.db.selectFrom('loop_runs').select('id').where('loop_id', '=', l.id).execute();
        expect(left).toEqual([]);
        // The slug is free again, and numbering starts over.
        const again = await create({ name: 'Again', slug: l.slug, agent_slug: 'shell', prompt_template: 'x' });
        expect((await trigger(again.slug)).run_number).toBe(1);
      });

      it('a loop with history only is removed as well', async () => {
        const l = await loop();
        const run = await trigger(l.slug);
        await finishPod(run.pod_key!, 'completed');
        expect((await call('DELETE', `/loops/${l.slug}`)).statusCode).toBe(200);
        expectError(await call('GET', `/loops/${l.slug}`), 404, 'NOT_FOUND');
        expectError(await call('DELETE', '/loops/no-such-loop'), 404, 'NOT_FOUND');
      });
    });

    describe('stats', () => {
      it('total/successful/failed/active and last_run_at always agree with the runs', async () => {
        const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 2, timeout_minutes: 5 });
        const check = async () => {
          const runs = await allRuns(l.slug);
          const started = runs.map((r) => r.started_at).filter((s): s is string => s !== null).sort();
          const expected = {
            total_runs: runs.length,
            successful_runs: runs.filter((r) => r.status === 'completed').length,
            failed_runs: runs.filter((r) => r.status === 'failed' || r.status === 'timeout').length,
            cancelled_runs: runs.filter((r) => r.status === 'cancelled').length,
            active_run_count: runs.filter((r) => ['queued', 'pending', 'running'].includes(r.status)).length,
            last_run_at: started.length > 0 ? started[started.length - 1] : null,
          };
          const got = await getLoop(l.slug);
          expect({ total_runs: got.total_runs, successful_runs: got.successful_runs, failed_runs: got.failed_runs, cancelled_runs: got.cancelled_runs, active_run_count: got.active_run_count, last_run_at: got.last_run_at }).toEqual(expected);
          const listed = ((await call('GET', '/loops')).json() as { loops: LoopJson[] }).loops.find((x) => x.slug === l.slug)!;
          expect(listed).toEqual(got);
          return expected;
        };
        expect(await check()).toEqual({ total_runs: 0, successful_runs: 0, failed_runs: 0, cancelled_runs: 0, active_run_count: 0, last_run_at: null });
        const r1 = await trigger(l.slug);
        await advance(1_000);
        const r2 = await trigger(l.slug);
        await advance(1_000);
        const r3 = await trigger(l.slug);
        await check();
        await finishPod(r1.pod_key!, 'completed');
        await advance(1_000);
        expect((await check()).last_run_at).toBe(iso(clock - 1_000));
        await finishPod(r2.pod_key!, 'failed');
        await check();
        await call('POST', `/loops/${l.slug}/runs/${r3.id}/cancel`);
        await check();
        const r4 = await trigger(l.slug);
        await advance(6 * 60_000);
        await sweepRuns(ctx);
        expect((await getRun(l.slug, r4.id)).status).toBe('timeout');
        await check();
        await call('PUT', `/loops/${l.slug}`, { concurrency_policy: 'skip', max_concurrent_runs: 1 });
        await trigger(l.slug);
        expect((await trigger(l.slug)).status).toBe('skipped');
        await call('POST', `/loops/${l.slug}/disable`);
        const final = await check();
        expect(final).toMatchObject({ total_runs: 6, successful_runs: 1, failed_runs: 2, cancelled_runs: 1, active_run_count: 1 });
      });
    });

    describe('concurrency', () => {
      it('simultaneous triggers of a skip loop (max 1): exactly one starts, run numbers 1..n without gaps', async () => {
        const l = await loop();
        const results = await Promise.all(Array.from({ length: 10 }, () => call('POST', `/loops/${l.slug}/trigger`)));
        for (const r of results) expect(r.statusCode, r.body).toBe(201);
        const runs = results.map((r) => (r.json() as { run: RunJson }).run);
        expect(runs.filter((r) => r.status === 'pending')).toHaveLength(1);
        expect(runs.filter((r) => r.status === 'skipped')).toHaveLength(9);
        expect(runs.map((r) => r.run_number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(await getLoop(l.slug)).toMatchObject({ total_runs: 10, active_run_count: 1 });
      });

      it('simultaneous triggers of a queue loop (max 2): two start, the rest queue', async () => {
        const l = await loop({ concurrency_policy: 'queue', max_concurrent_runs: 2 });
        const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/loops/${l.slug}/trigger`)));
        const runs = results.map((r) => (r.json() as { run: RunJson }).run);
        expect(runs.filter((r) => r.status === 'pending')).toHaveLength(2);
        expect(runs.filter((r) => r.status === 'queued')).toHaveLength(6);
      });

      it('simultaneous creates with one name get distinct derived slugs', async () => {
        const { who } = await freshOrg();
        const results = await Promise.all(Array.from({ length: 5 }, () => call('POST', '/loops', { name: 'Race', prompt_template: 'x' }, who)));
        for (const r of results) expect(r.statusCode, r.body).toBe(201);
        const slugs = results.map((r) => (r.json() as { loop: LoopJson }).loop.slug).sort();
        expect(slugs).toEqual(['race', 'race-2', 'race-3', 'race-4', 'race-5']);
      });

      it('raising max_concurrent_runs starts queued runs that now fit; lowering it stops nothing', async () => {
        const l = await loop({ concurrency_policy: 'queue' });
        const runs: RunJson[] = [];
        for (let i = 0; i < 4; i++) runs.push(await trigger(l.slug));
        expect(runs.map((r) => r.status)).toEqual(['pending', 'queued', 'queued', 'queued']);
        const res = await call('PUT', `/loops/${l.slug}`, { max_concurrent_runs: 3 });
        expect(res.statusCode, res.body).toBe(200);
        expect((res.json() as { loop: LoopJson }).loop.active_run_count).toBe(4);
        const now = await Promise.all(runs.map((r) => getRun(l.slug, r.id)));
        expect(now.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'queued']);
        await call('PUT', `/loops/${l.slug}`, { max_concurrent_runs: 1 });
        const after = await Promise.all(runs.map((r) => getRun(l.slug, r.id)));
        expect(after.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'queued']);
        // A freed slot does not start the queue while the loop is over its new limit.
        await finishPod(after[0].pod_key!, 'completed');
        expect((await getRun(l.slug, runs[3].id)).status).toBe('queued');
      });

      it('a start in flight holds its run: no sweeper launches a second pod while the launch takes long; after the lease, the run is retried', async () => {
        const { org, who } = await freshOrg();
        const l = await create({ name: 'Leased', agent_slug: 'shell', prompt_template: 'echo hi' }, who);
        const run = await trigger(l.slug, undefined, who);
        expect(run).toMatchObject({ status: 'pending', pod_key: null });
        await insertRunner(org.id);
        // Another starter (a replica placing a burst of pods) claims the run and is still launching.
        const row = await runRecords.findRunById(t.store.db, run.id);
        expect(await runRecords.claimStart(t.store.db, run.id, row!.updated_at, clock, clock + START_LEASE_MS)).toBe(true);
        const claimed = await runRecords.findRunById(t.store.db, run.id);
        // A second claim of the same run fails while the lease lives, even with what it read last.
        expect(await runRecords.claimStart(t.store.db, run.id, claimed!.updated_at, clock, clock + START_LEASE_MS)).toBe(false);
        const orgPods = () => t.store.db.selectFrom('pods').select('key').where('org_id', '=', org.id).execute();
        await advance(START_RETRY_MS + 1_000);
        await sweepRuns(ctx);
        expect(await getRun(l.slug, run.id, who)).toMatchObject({ status: 'pending', pod_key: null });
        expect(await orgPods()).toEqual([]);
        // The starter died mid-launch: once its lease is over, a sweep starts the run, with one pod.
        await advance(START_LEASE_MS);
        await sweepRuns(ctx);
        const started = await getRun(l.slug, run.id, who);
        expect(started.pod_key).toEqual(expect.any(String));
        expect((await orgPods()).map((p) => p.key)).toEqual([started.pod_key]);
        expect((await runRecords.findRunById(t.store.db, run.id))!.start_claimed_until).toBeNull();
      });
    });

    describe('callback_status', () => {
      it('is none without callback_url; pending once a run with a callback_url ends (skipped runs send nothing)', async () => {
        const plain = await loop();
        const p = await trigger(plain.slug);
        await finishPod(p.pod_key!, 'completed');
        expect((await getRun(plain.slug, p.id)).callback_status).toBe('none');
        const hooked = await loop({ callback_url: 'https://hooks.example.com/drover' });
        const run = await trigger(hooked.slug);
        expect(run.callback_status).toBe('none');
        const skipped = await trigger(hooked.slug);
        expect(skipped).toMatchObject({ status: 'skipped', callback_status: 'none' });
        await finishPod(run.pod_key!, 'completed');
        expect((await getRun(hooked.slug, run.id)).callback_status).toBe('pending');
        const cancelled = await trigger(hooked.slug);
        const res = await call('POST', `/loops/${hooked.slug}/runs/${cancelled.id}/cancel`);
        expect((res.json() as { run: RunJson }).run.callback_status).toBe('pending');
      });
    });

    describe('Idempotency-Key', () => {
      it('replays a create and a trigger with the same key and body; a different body is 409', async () => {
        const headers = { 'idempotency-key': `create-${prefix}-${kind}` };
        const body = { name: 'Idem', prompt_template: 'x', agent_slug: 'shell' };
        const first = await t.request({ method: 'POST', url: url('/loops'), headers, payload: body });
        expect(first.statusCode, first.body).toBe(201);
        const before = await counts();
        const replay = await t.request({ method: 'POST', url: url('/loops'), headers, payload: body });
        expect(replay.statusCode).toBe(201);
        expect(replay.json()).toEqual(first.json());
        expectError(await t.request({ method: 'POST', url: url('/loops'), headers, payload: { ...body, name: 'Other' } }), 409, 'IDEMPOTENCY_MISMATCH');
        expect(await counts()).toEqual(before);
        const slug = (first.json() as { loop: LoopJson }).loop.slug;
        const th = { 'idempotency-key': `trigger-${prefix}-${kind}` };
        const run1 = await t.request({ method: 'POST', url: url(`/loops/${slug}/trigger`), headers: th });
        expect(run1.statusCode, run1.body).toBe(201);
        const run2 = await t.request({ method: 'POST', url: url(`/loops/${slug}/trigger`), headers: th });
        expect(run2.json()).toEqual(run1.json());
        expect((await allRuns(slug)).length).toBe(1);
      });
    });
  });
});
