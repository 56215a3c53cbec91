/**
 * What docs/agents.md adds to pods, at the API on every database: `CONFIG permission_mode` checked
 * per agent (400 naming that agent's values), the `ENV` directive (shown as `env`, sent to the
 * runner in the pod spec), and the agent's results (`result`, `session_id`, `usage`) as a runner
 * reports them, on pods, on loop runs, and summed into a loop's `total_cost_usd`. No runner process
 * runs here: runner rows come from the store and runner reports are applied as the gateway does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podFinished, terminateOnServer } from '../../src/domain/pods/lifecycle.ts';
import { podSpec } from '../../src/domain/pods/spec.ts';
import { ACTIVE_POD_STATUSES } from '../../src/protocol/enums.ts';
import { decodeRunnerMessage, encode, type PodOutcome } from '../../src/protocol/runner-link.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';

const ALL_AGENTS = '["shell","claude-code","codex","gemini-cli","aider","opencode","my-bot"]';
const NULL_USAGE = { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null, turns: null };

interface PodJson {
  key: string;
  status: string;
  env: Record<string, string>;
  result: string | null;
  session_id: string | null;
  usage: Record<string, number | null>;
}

describe.each(DATABASES)('pods: agents unattended (docs/agents.md) on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;

  const create = (agent: string, layer: string) => t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: agent, agentfile_layer: layer } });
  const createOk = async (agent: string, layer: string): Promise<string> => {
    const res = await create(agent, layer);
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { pod: { pod_key: string } }).pod.pod_key;
  };
  const detail = async (key: string): Promise<PodJson> => {
    const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}`) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { pod: PodJson }).pod;
  };
  const podCount = async () => Number((await t.store.db.selectFrom('pods').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const row = (key: string) => t.store.db.selectFrom('pods').selectAll().where('key', '=', key).executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t.store, t.org.id, { agents: ALL_AGENTS });
    const agent = await t.request({
      method: 'POST',
      url: '/api/v1/admin/orgs/acme/agents',
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { slug: 'my-bot', name: 'My bot', command: 'my-bot' },
    });
    expect(agent.statusCode, agent.body).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('CONFIG permission_mode', () => {
    const VALID: Record<string, string[]> = {
      'claude-code': ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'plan'],
      codex: ['read-only', 'workspace-write', 'danger-full-access'],
      'gemini-cli': ['default', 'auto_edit', 'yolo', 'plan'],
      opencode: ['auto', 'default'],
    };

    it.each(Object.entries(VALID))('%s takes exactly its own values', async (agent, modes) => {
      for (const mode of modes) {
        const key = await createOk(agent, `PROMPT "x"\nCONFIG permission_mode = ${mode}`);
        expect(JSON.parse((await row(key)).config)).toMatchObject({ permission_mode: mode });
      }
      // The values of the other agents are refused, naming the line and this agent's values.
      const foreign = Object.values(VALID)
        .flat()
        .filter((mode) => !modes.includes(mode));
      const count = await podCount();
      for (const mode of [...new Set(foreign)]) {
        const body = expectError(await create(agent, `PROMPT "x"\n\nCONFIG permission_mode = ${mode}`), 400, 'VALIDATION_FAILED');
        expect(body.details![0].field).toBe('/agentfile_layer');
        expect(body.error).toBe(`agentfile_layer line 3: CONFIG permission_mode of ${agent} must be one of ${modes.join(', ')}, got "${mode}"`);
      }
      expect(await podCount()).toBe(count);
    });

    it('issue 11 findings: read-only for codex, auto_edit for gemini-cli and auto for opencode are accepted; default is no codex sandbox', async () => {
      await createOk('codex', 'CONFIG permission_mode = read-only');
      await createOk('gemini-cli', 'CONFIG permission_mode = auto_edit');
      await createOk('opencode', 'CONFIG permission_mode = auto');
      expectError(await create('codex', 'CONFIG permission_mode = default'), 400, 'VALIDATION_FAILED');
    });

    it.each(['aider', 'shell', 'my-bot'])('%s takes none: any value is 400', async (agent) => {
      const count = await podCount();
      for (const mode of ['default', 'bypassPermissions', 'auto']) {
        const body = expectError(await create(agent, `CONFIG permission_mode = ${mode}`), 400, 'VALIDATION_FAILED');
        expect(body.error).toBe(`agentfile_layer line 1: CONFIG the agent "${agent}" takes no permission_mode`);
      }
      expect(await podCount()).toBe(count);
      await createOk(agent, 'PROMPT "no mode at all"');
    });

    it('reaches the runner in the pod spec', async () => {
      const key = await createOk('gemini-cli', 'CONFIG permission_mode = plan');
      const spec = await podSpec(t.ctx, await row(key), 'acme', 'http://127.0.0.1:1');
      expect(spec.permission_mode).toBe('plan');
    });
  });

  describe('ENV', () => {
    it('is shown in pod detail as env and sent to the runner in the pod spec', async () => {
      const key = await createOk('claude-code', 'ENV ANTHROPIC_BASE_URL "http://10.0.0.5:8080"\nENV LANG C.UTF-8\nCREDENTIAL ANTHROPIC_API_KEY\nPROMPT "x"');
      const pod = await detail(key);
      expect(pod.env).toEqual({ ANTHROPIC_BASE_URL: 'http://10.0.0.5:8080', LANG: 'C.UTF-8' });
      const spec = await podSpec(t.ctx, await row(key), 'acme', 'http://127.0.0.1:1');
      expect(spec.agent_env).toEqual({ ANTHROPIC_BASE_URL: 'http://10.0.0.5:8080', LANG: 'C.UTF-8' });
      expect(spec.credentials).toEqual(['ANTHROPIC_API_KEY']);
      // Pods without ENV show an empty object, never null.
      expect((await detail(await createOk('shell', 'PROMPT "x"'))).env).toEqual({});
    });

    it.each([
      ['ENV lower "x"', 1, 'ENV must be an environment variable name'],
      ['PROMPT "x"\nENV DROVER_POD_KEY "p-1"', 2, 'ENV DROVER_POD_KEY is reserved'],
      ['ENV PATH "/evil"', 1, 'ENV PATH is reserved'],
      ['ENV HOME "/"', 1, 'ENV HOME is reserved'],
      // The loader and libc names (docs/runners.md "The walls"), for ENV and CREDENTIAL alike.
      ...['LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'GCONV_PATH', 'GETCONF_DIR', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'MALLOC_CHECK_', 'MALLOC_ARENA_MAX', 'NLSPATH', 'RES_OPTIONS', 'TMPDIR', 'TZDIR'].flatMap(
        (name): [string, number, string][] => [
          [`PROMPT "x"\nENV ${name} "/tmp/evil.so"`, 2, `ENV ${name} is not allowed`],
          [`CREDENTIAL ${name}`, 1, `CREDENTIAL ${name} is not allowed`],
        ],
      ),
      [`ENV BIG "${'x'.repeat(4097)}"`, 1, 'ENV BIG must be at most 4096 bytes'],
      [Array.from({ length: 51 }, (_, i) => `ENV V${i} "${i}"`).join('\n'), 51, 'at most 50 ENV variables'],
      ['CREDENTIAL API_KEY\nENV API_KEY "x"', 2, 'API_KEY is given both as CREDENTIAL (line 1) and as ENV'],
    ])('%j → 400 naming line %i, nothing written', async (layer, line, reason) => {
      const count = await podCount();
      const body = expectError(await create('shell', layer), 400, 'VALIDATION_FAILED');
      expect(body.details![0]).toEqual({ field: '/agentfile_layer', message: expect.stringContaining(`line ${line}: ${reason}`) });
      expect(await podCount()).toBe(count);
    });

    it('takes 50 variables, and values of 4 KiB (within the 64 KiB of an agentfile)', async () => {
      const layer = [...Array.from({ length: 49 }, (_, i) => `ENV V${i} "${String(i).padEnd(1000, 'v')}"`), `ENV BIG "${'é'.repeat(2048)}"`].join('\n');
      const env = (await detail(await createOk('shell', layer))).env;
      expect(Object.keys(env)).toHaveLength(50);
      expect(env.BIG).toBe('é'.repeat(2048));
    });
  });

  describe('results', () => {
    const usage = { input_tokens: 2100, output_tokens: 110, cache_read_tokens: 400, cache_write_tokens: 40, cost_usd: 0.01088, turns: 2 };

    it('a pod shows what its runner reported: result, session_id, usage (list and detail); null until then', async () => {
      const key = await createOk('claude-code', 'PROMPT "x"');
      expect(await detail(key)).toMatchObject({ result: null, session_id: null, usage: NULL_USAGE });
      await podFinished(t.ctx, runnerId, { key, outcome: 'completed', exit_code: 0, error_message: null, session_id: 'sess-1', result: 'Fixed the bug.', usage });
      expect(await detail(key)).toMatchObject({ status: 'completed', result: 'Fixed the bug.', session_id: 'sess-1', usage });
      const list = await t.request({ method: 'GET', url: t.path('/pods?limit=100') });
      const item = (list.json() as { pods: PodJson[] }).pods.find((p) => p.key === key);
      expect(item).toMatchObject({ result: 'Fixed the bug.', session_id: 'sess-1', usage });
    });

    it('a runner of an earlier version (no result, no usage): all null', async () => {
      const key = await createOk('codex', 'PROMPT "x"');
      await podFinished(t.ctx, runnerId, { key, outcome: 'failed', exit_code: 1, error_message: 'agent ended with exit code 1', session_id: null });
      expect(await detail(key)).toMatchObject({ status: 'failed', result: null, session_id: null, usage: NULL_USAGE });
    });

    it('a pod terminated on the server still gets what its agent used until it stopped', async () => {
      const key = await createOk('opencode', 'PROMPT "x"');
      await terminateOnServer(t.ctx, await row(key), ACTIVE_POD_STATUSES, 'terminated through the API');
      await podFinished(t.ctx, runnerId, { key, outcome: 'terminated', exit_code: null, error_message: 'terminated', session_id: 'ses_x', result: null, usage: { ...NULL_USAGE, input_tokens: 5, cost_usd: 0.5 } });
      expect(await detail(key)).toMatchObject({ status: 'terminated', session_id: 'ses_x', usage: { ...NULL_USAGE, input_tokens: 5, cost_usd: 0.5 } });
      // A repeated report changes nothing.
      await podFinished(t.ctx, runnerId, { key, outcome: 'terminated', exit_code: null, error_message: 'terminated', session_id: 'ses_y', result: 'late', usage: { ...NULL_USAGE, input_tokens: 9 } });
      expect(await detail(key)).toMatchObject({ session_id: 'ses_x', result: null, usage: { input_tokens: 5 } });
    });

    it('the runner protocol carries them, and refuses what does not fit (a result over 64 KiB, negative counts)', () => {
      const outcome = { key: 'p-1', outcome: 'completed', exit_code: 0, error_message: null, session_id: 's', result: 'r', usage };
      expect(decodeRunnerMessage(encode({ type: 'pod_exited', result: outcome as PodOutcome }))).toMatchObject({ result: outcome });
      expect(() => decodeRunnerMessage(encode({ type: 'pod_exited', result: { ...outcome, result: 'x'.repeat(65_537) } as PodOutcome }))).toThrow(/invalid runner message/);
      expect(() => decodeRunnerMessage(encode({ type: 'pod_exited', result: { ...outcome, usage: { ...usage, input_tokens: -1 } } as PodOutcome }))).toThrow(/invalid runner message/);
      expect(() => decodeRunnerMessage(encode({ type: 'pod_exited', result: { ...outcome, usage: { ...usage, extra: 1 } } as PodOutcome }))).toThrow();
    });

    it('loop runs show their pod\'s results; the loop sums the costs its runs reported into total_cost_usd', async () => {
      const created = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'costly', agent_slug: 'claude-code', prompt_template: 'go', execution_mode: 'direct', concurrency_policy: 'queue' } });
      expect(created.statusCode, created.body).toBe(201);
      const slug = (created.json() as { loop: { slug: string; total_cost_usd: number | null } }).loop.slug;
      expect((created.json() as { loop: { total_cost_usd: number | null } }).loop.total_cost_usd).toBeNull();
      const costs = [0.1, 0.2, null];
      for (const cost of costs) {
        const trigger = await t.request({ method: 'POST', url: t.path(`/loops/${slug}/trigger`), payload: {} });
        expect(trigger.statusCode, trigger.body).toBe(201);
        const run = trigger.json() as { run: { id: number; pod_key: string; usage: unknown } };
        expect(run.run.usage).toEqual(NULL_USAGE);
        await podFinished(t.ctx, runnerId, { key: run.run.pod_key, outcome: 'completed', exit_code: 0, error_message: null, session_id: `s-${cost}`, result: `cost ${cost}`, usage: { ...usage, cost_usd: cost } });
        const got = await t.request({ method: 'GET', url: t.path(`/loops/${slug}/runs/${run.run.id}`) });
        expect(got.json()).toMatchObject({ run: { status: 'completed', result: `cost ${cost}`, session_id: `s-${cost}`, usage: { ...usage, cost_usd: cost } } });
      }
      const runs = await t.request({ method: 'GET', url: t.path(`/loops/${slug}/runs`) });
      expect((runs.json() as { runs: { result: string }[] }).runs.map((r) => r.result)).toEqual(['cost null', 'cost 0.2', 'cost 0.1']);
      const loop = await t.request({ method: 'GET', url: t.path(`/loops/${slug}`) });
      expect((loop.json() as { loop: { total_cost_usd: number } }).loop.total_cost_usd).toBe(0.3);
      const list = await t.request({ method: 'GET', url: t.path('/loops') });
      expect((list.json() as { loops: { slug: string; total_cost_usd: number }[] }).loops.find((l) => l.slug === slug)?.total_cost_usd).toBe(0.3);
    });
  });
});
