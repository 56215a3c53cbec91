/**
 * The model relay end to end (docs/agents.md "The model relay"): `drover serve` and `drover runner`
 * as processes, `shell` pods in the bwrap sandbox calling a loopback stand-in of each provider API
 * through the relay with curl. The real keys stay on the runner; usage and budgets come from the relay.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { runnerPath, standInBinDir, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { COST, MODEL, PRICES, startStandIn } from './stand-in.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_relay_admin_token_0123456789abcdef';
const KEYS = { ANTHROPIC_API_KEY: 'sk-ant-real-secret-anthropic-0001', OPENAI_API_KEY: 'sk-real-secret-openai-0002', GEMINI_API_KEY: 'real-secret-gemini-0003' };

interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
}
interface PodDetail {
  key: string;
  status: string;
  error_message: string | null;
  usage: Usage;
  max_cost_usd: number | null;
}

const layer = (script: string, ...directives: string[]) => [...directives, 'PROMPT <<END', script, 'END'].join('\n');

describe.each(DATABASES)('model relay (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let apiKey: string;
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });
  const admin = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `/api/v1/admin${urlPath}`, { bearer: ADMIN_TOKEN, body });

  async function runPod(agentfile: string): Promise<PodDetail & { output: string }> {
    const created = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: agentfile });
    expect(created.status, created.text).toBe(201);
    const key = (created.body as { pod: { pod_key: string } }).pod.pod_key;
    const pod = await waitFor(
      async () => {
        const p = (await api('GET', `${ORG}/pods/${key}`)).body as { pod: PodDetail };
        return ['completed', 'failed', 'terminated'].includes(p.pod.status) ? p.pod : undefined;
      },
      { timeout: 30_000, what: `pod ${key} to end` },
    );
    const output = ((await api('GET', `${ORG}/pods/${key}/output`)).body as { output: string }).output;
    return { ...pod, output };
  }

  /** The runner's HOME, work dir, stand-in bin dir and price file: removed after the suite. */
  let scratch: string | undefined;

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('relay');
    standIn = await startStandIn();
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn', DROVER_POD_OUTPUT_BYTES_PER_SEC: '0' } });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const prices = path.join(scratch, 'prices.json');
    fs.writeFileSync(prices, JSON.stringify(PRICES));
    const token = ((await admin('POST', '/orgs/default/runner-tokens', {})).body as { token: string }).token;
    runner = await startRunnerProcess({
      server: server.url,
      token,
      workDir: path.join(scratch, 'runner'),
      name: 'relay',
      maxPods: 4,
      // The runner's start (its sandbox's and network walls' self-tests) is slow on a loaded machine.
      timeoutMs: 90_000,
      env: {
        PATH: runnerPath(standInBinDir([], fs.mkdtempSync(path.join(scratch, 'bin-')))),
        HOME: scratch,
        LANG: 'C.UTF-8',
        DROVER_RUNNER_PRICES: prices,
        // The stand-in is on the runner's loopback: only the operator's list lets the relay reach it.
        DROVER_RUNNER_ALLOW_HOSTS: new URL(standIn.url).host,
        ...Object.fromEntries(Object.entries(KEYS).map(([name, value]) => [`DROVER_CREDENTIAL_${name}`, value])),
      },
    });
    await waitFor(async () => ((await api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', { what: 'the runner to be online' });
  }, 90_000);

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await standIn?.close();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const ANTHROPIC = (stream: boolean) => `curl -sS "$ANTHROPIC_BASE_URL/v1/messages" -H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json' -d '{"model":"${MODEL}","stream":${stream}}'; echo`;

  it('Anthropic: the pod holds a placeholder, the stand-in gets the real key, usage is the sum of plain and streamed calls', async () => {
    const before = standIn.requests.length;
    const pod = await runPod(layer(`env | sort\n${ANTHROPIC(false)}\n${ANTHROPIC(true)}`, 'CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${standIn.url}"`));
    expect(pod.status, pod.output).toBe('completed');
    for (const secret of Object.values(KEYS)) expect(pod.output).not.toContain(secret);
    expect(pod.output).toMatch(/^ANTHROPIC_API_KEY=sk-drover-relay-[0-9a-f]{48}$/m);
    expect(pod.output).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/anthropic$/m);
    expect(pod.output).toContain('message_stop');
    const calls = standIn.requests.slice(before);
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call.headers['x-api-key']).toBe(KEYS.ANTHROPIC_API_KEY);
    expect(pod.usage).toMatchObject({ input_tokens: 200, output_tokens: 40, cache_read_tokens: 20, cache_write_tokens: 10 });
    expect(pod.usage.cost_usd).toBeCloseTo(2 * COST.anthropic, 9);
  });

  it('OpenAI (Responses and Chat Completions, Bearer) and Gemini (x-goog-api-key and ?key=): keys swapped, usage read from plain and streamed answers', async () => {
    const before = standIn.requests.length;
    const post = (url: string, body: string, header: string) => `curl -sS "${url}" -H "${header}" -H 'content-type: application/json' -d '${body}'; echo`;
    const script = [
      post('$OPENAI_BASE_URL/responses', `{"model":"${MODEL}"}`, 'authorization: Bearer $OPENAI_API_KEY'),
      post('$OPENAI_BASE_URL/responses', `{"model":"${MODEL}","stream":true}`, 'authorization: Bearer $OPENAI_API_KEY'),
      post('$OPENAI_BASE_URL/chat/completions', `{"model":"${MODEL}"}`, 'authorization: Bearer $OPENAI_API_KEY'),
      post('$OPENAI_BASE_URL/chat/completions', `{"model":"${MODEL}","stream":true}`, 'authorization: Bearer $OPENAI_API_KEY'),
      post(`$GOOGLE_GEMINI_BASE_URL/v1beta/models/${MODEL}:generateContent`, '{}', 'x-goog-api-key: $GEMINI_API_KEY'),
      post(`$GOOGLE_GEMINI_BASE_URL/v1beta/models/${MODEL}:streamGenerateContent?alt=sse&key=$GEMINI_API_KEY`, '{}', 'x-drover-test: 1'),
      'env | sort',
    ].join('\n');
    const pod = await runPod(layer(script, 'CREDENTIAL OPENAI_API_KEY', 'CREDENTIAL GEMINI_API_KEY', `ENV OPENAI_BASE_URL "${standIn.url}/v1"`, `ENV GOOGLE_GEMINI_BASE_URL "${standIn.url}"`));
    expect(pod.status, pod.output).toBe('completed');
    for (const secret of Object.values(KEYS)) expect(pod.output).not.toContain(secret);
    const calls = standIn.requests.slice(before);
    expect(calls.map((c) => c.path)).toEqual(['/v1/responses', '/v1/responses', '/v1/chat/completions', '/v1/chat/completions', `/v1beta/models/${MODEL}:generateContent`, `/v1beta/models/${MODEL}:streamGenerateContent`]);
    for (const call of calls.slice(0, 4)) expect(call.headers.authorization).toBe(`Bearer ${KEYS.OPENAI_API_KEY}`);
    expect(calls[4].headers['x-goog-api-key']).toBe(KEYS.GEMINI_API_KEY);
    expect(calls[5].query.get('key')).toBe(KEYS.GEMINI_API_KEY);
    // The streamed Chat Completions call was asked for its usage.
    expect(calls[3].body.stream_options).toEqual({ include_usage: true });
    expect(pod.usage).toMatchObject({ input_tokens: 600, output_tokens: 120, cache_read_tokens: 60, cache_write_tokens: 0 });
    expect(pod.usage.cost_usd).toBeCloseTo(4 * COST.openai + 2 * COST.gemini, 9);
  });

  it("an ENV upstream on the runner's loopback that the operator did not allow is refused (PostgreSQL's port): 403, nothing forwarded", async () => {
    const before = standIn.requests.length;
    const pod = await runPod(
      layer(`curl -sS -w '\\nstatus %{http_code}\\n' "$ANTHROPIC_BASE_URL/v1/messages" -H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json' -d '{}'`, 'CREDENTIAL ANTHROPIC_API_KEY', 'ENV ANTHROPIC_BASE_URL "http://127.0.0.1:5432"'),
    );
    expect(pod.output).toMatch(/^status 403$/m);
    expect(pod.output).toContain('refuses the upstream 127.0.0.1:5432');
    expect(standIn.requests.length).toBe(before);
    for (const secret of Object.values(KEYS)) expect(pod.output).not.toContain(secret);
  });

  it('a placeholder is worthless outside its pod and after it ended', async () => {
    const pod = await runPod(layer('echo "$ANTHROPIC_API_KEY"', 'CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${standIn.url}"`));
    const placeholder = pod.output.trim().split('\n')[0];
    expect(placeholder).toMatch(/^sk-drover-relay-[0-9a-f]{48}$/);
    const before = standIn.requests.length;
    // Each pod reaches the relay only inside its own network namespace (docs/runners.md "Network"):
    // another pod presents the ended pod's placeholder there.
    const other = await runPod(
      layer(`curl -sS -w '\\nstatus %{http_code}\\n' "$ANTHROPIC_BASE_URL/v1/messages" -H "x-api-key: ${placeholder}" -H 'content-type: application/json' -d '{}'`, 'CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${standIn.url}"`),
    );
    expect(other.output).toMatch(/^status 401$/m);
    expect(other.output).toContain('"type":"error"');
    expect(standIn.requests.length).toBe(before);
  });

  it('CONFIG max_cost_usd below one call: one call reaches the stand-in, the next is a 429, the pod fails naming the budget', async () => {
    const before = standIn.requests.length;
    const pod = await runPod(layer(`${ANTHROPIC(false)}\ncurl -sS -o /dev/null -w 'status %{http_code}\\n' "$ANTHROPIC_BASE_URL/v1/messages" -H "x-api-key: $ANTHROPIC_API_KEY" -d '{}'\nsleep 30`, 'CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${standIn.url}"`, 'CONFIG max_cost_usd = 0.1'));
    expect(pod.status).toBe('failed');
    expect(pod.error_message).toBe(`budget reached: $${COST.anthropic.toFixed(4)} of $0.1000 (pod max_cost_usd)`);
    expect(standIn.requests.length - before).toBe(1);
    expect(pod.usage.cost_usd).toBeCloseTo(COST.anthropic, 9);
    // The pod shows its budget beside its spend (usage.cost_usd).
    expect(pod.max_cost_usd).toBe(0.1);
  });

  it("an organization's monthly quota stops its pods the same way", async () => {
    expect((await admin('PATCH', '/orgs/default/quotas', { max_cost_usd_per_month: 0.5 })).status).toBe(200);
    try {
      const before = standIn.requests.length;
      const pod = await runPod(layer(`${ANTHROPIC(false)}\nsleep 30`, 'CREDENTIAL ANTHROPIC_API_KEY', `ENV ANTHROPIC_BASE_URL "${standIn.url}"`));
      expect(pod.status).toBe('failed');
      expect(pod.error_message).toMatch(/^budget reached: \$\d+\.\d\d of \$0\.5000 \(organization max_cost_usd_per_month\)$/);
      expect(standIn.requests.length).toBe(before);
    } finally {
      await admin('PATCH', '/orgs/default/quotas', { max_cost_usd_per_month: null });
    }
  });

  it('a loop over its daily budget skips its runs; GET /usage by day, agent and loop adds up to the pods', async () => {
    const created = await api('POST', `${ORG}/loops`, {
      name: 'relay budget',
      agent_slug: 'shell',
      execution_mode: 'direct',
      prompt_template: ANTHROPIC(false),
      agentfile_layer: `CREDENTIAL ANTHROPIC_API_KEY\nENV ANTHROPIC_BASE_URL "${standIn.url}"`,
      budget_usd_per_day: 0.1,
    });
    expect(created.status, created.text).toBe(201);
    const slug = (created.body as { loop: { slug: string; budget_usd_per_day: number } }).loop.slug;
    expect((created.body as { loop: { budget_usd_per_day: number } }).loop.budget_usd_per_day).toBe(0.1);
    const trigger = async () => {
      const response = await api('POST', `${ORG}/loops/${slug}/trigger`, {});
      expect(response.status, response.text).toBeLessThan(300);
      return (response.body as { run: { id: number } }).run.id;
    };
    const first = await trigger();
    const run = await waitFor(
      async () => {
        const r = ((await api('GET', `${ORG}/loops/${slug}/runs/${first}`)).body as { run: { status: string } }).run;
        return ['completed', 'failed'].includes(r.status) ? r : undefined;
      },
      { timeout: 30_000, what: 'the first run to end' },
    );
    expect(run.status).toBe('completed');
    const second = await trigger();
    const skipped = ((await api('GET', `${ORG}/loops/${slug}/runs/${second}`)).body as { run: { status: string; error_message: string } }).run;
    expect(skipped.status).toBe('skipped');
    expect(skipped.error_message).toBe(`skipped: budget reached: $${COST.anthropic.toFixed(4)} of $0.1000 (loop budget_usd_per_day)`);
    const loop = ((await api('GET', `${ORG}/loops/${slug}`)).body as { loop: { spent_usd_today: number } }).loop;
    expect(loop.spent_usd_today).toBeCloseTo(COST.anthropic, 9);

    const pods = ((await api('GET', `${ORG}/pods?limit=100`)).body as { pods: { key: string }[] }).pods;
    let cost = 0;
    for (const { key } of pods) cost += ((await api('GET', `${ORG}/pods/${key}`)).body as { pod: PodDetail }).pod.usage.cost_usd ?? 0;
    for (const groupBy of ['day', 'agent', 'loop']) {
      const report = await api('GET', `${ORG}/usage?group_by=${groupBy}`);
      expect(report.status, report.text).toBe(200);
      const body = report.body as { groups: { key: string | null; cost_usd: number | null; pods: number }[]; total: { cost_usd: number; pods: number } };
      expect(body.total.cost_usd).toBeCloseTo(cost, 9);
      expect(body.total.pods).toBe(pods.length);
      expect(body.groups.reduce((sum, g) => sum + (g.cost_usd ?? 0), 0)).toBeCloseTo(cost, 9);
      if (groupBy === 'loop') expect(body.groups.find((g) => g.key === slug)?.cost_usd).toBeCloseTo(COST.anthropic, 9);
      if (groupBy === 'agent') expect(body.groups.map((g) => g.key)).toEqual(['shell']);
      if (groupBy === 'day') expect(body.groups[0].key).toBe(new Date().toISOString().slice(0, 10));
    }
  });

  it('GET /usage refuses bad input with 400 and needs pods:read', async () => {
    for (const query of ['group_by=week', 'from=yesterday', 'from=2026-01-01T00:00:00Z', 'unknown=1']) {
      const response = await api('GET', `${ORG}/usage?${query}`);
      expect(response.status, query).toBe(400);
      expect((response.body as { code: string }).code).toBe('VALIDATION_FAILED');
    }
    expect((await http(server.url, 'GET', `${ORG}/usage`)).status).toBe(401);
  });
});
