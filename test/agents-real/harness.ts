/**
 * What the real-agent suites share: a real `drover serve` (SQLite: these suites test the CLIs, not
 * the database; `DROVER_TEST_REAL_AGENTS_DATABASE=postgres` with DATABASE_URL runs them on
 * PostgreSQL), a real `drover runner` whose PATH holds the published CLIs (test/helpers/
 * agent-clis.ts), and the model stand-ins (test/helpers/model-mocks) on loopback.
 *
 * How the agents are configured is how an operator would do it: the runner's credentials
 * (`credentials.json` in its work dir) hold the API keys, which reach an agent only when its
 * agentfile names them with `CREDENTIAL`; each model endpoint comes with `ENV` (the provider's
 * base-URL variable), which makes it the upstream of the runner's model relay
 * (docs/agents.md "The model relay"): every agent calls the relay with a placeholder key, the
 * relay calls the stand-in with the real one. The rest of their configuration (the model to use)
 * is in the runner's agent-home template (`<work dir>/agent-home/`, written by `writeAgentHome`),
 * which every pod's HOME is a copy of; the runner adds what the relay needs.
 *
 * The runner runs with its default pod sandbox (bubblewrap): agents run as a non-root user (so
 * Claude Code takes its default `bypassPermissions` although the tests run as root), and nothing
 * they start outlives their pod.
 *
 * Everything lives under /var/tmp, not /tmp: Codex does not set up its sandbox helper for a HOME
 * below the temp directory, and its workspace-write mode then cannot run a command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { commandLine, podProcesses, runnerPath, startRunnerProcess, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { MOCK_KEY_VARIABLES, ensureAgentClis, writeAgentHome, type AgentClis, type RealAgentSlug } from '../helpers/agent-clis.ts';
import { startModelMock, type ModelMock } from '../helpers/model-mocks/server.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import type { PriceOverrides } from '../../src/runner/relay/pricing.ts';

export const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_agents_real_admin_token_0123456789abcdef';
/** The API key of the model stand-in: the only key it accepts. */
export const MODEL_KEY = 'sk-mock-model-key-only-for-credentials-9f1c';
/** Prices of the stand-in's `mock-model` (the operator's price file, docs/agents.md): other models are priced by the maintained table. */
export const PRICES: PriceOverrides = { 'mock-model': { input_mtok: 3, output_mtok: 15, cache_read_mtok: 0.3, cache_write_mtok: 3.75 } };
/** Seconds between SIGTERM and SIGKILL when a pod is stopped (docs/api.md). */
const KILL_GRACE_MS = 10_000;

export interface PodView {
  key: string;
  status: string;
  error_message: string | null;
  exit_code: number | null;
  result: string | null;
  session_id: string | null;
  usage: Record<'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'cost_usd' | 'turns', number | null>;
  env: Record<string, string>;
}

export interface Harness {
  slug: RealAgentSlug;
  server: ServerProcess;
  runner: RunnerProcess;
  mock: ModelMock;
  clis: AgentClis;
  /** The runner's template of every pod's HOME, where the agents' configuration is (see the header). */
  agentHome: string;
  api(method: string, urlPath: string, body?: unknown): ReturnType<typeof http>;
  /** Creates a pod of this agent with these agentfile lines (a PROMPT naming `script` is added). */
  createPod(script: string, lines?: string[]): Promise<string>;
  pod(key: string): Promise<PodView>;
  waitEnded(key: string, timeoutMs?: number): Promise<PodView>;
  output(key: string): Promise<string>;
  close(): Promise<void>;
}


/** The lines of an agentfile that give the agent its key and endpoint (see the header). */
export function agentLines(slug: RealAgentSlug, mockUrl: string): string[] {
  const lines = [`CREDENTIAL ${MOCK_KEY_VARIABLES[slug]}`];
  if (slug === 'claude-code') lines.push(`ENV ANTHROPIC_BASE_URL "${mockUrl}"`);
  if (slug === 'gemini-cli') lines.push(`ENV GOOGLE_GEMINI_BASE_URL "${mockUrl}"`);
  // OpenAI's base URL holds its /v1.
  if (slug === 'codex' || slug === 'opencode') lines.push(`ENV OPENAI_BASE_URL "${mockUrl}/v1"`);
  // There is no network here but loopback: OpenCode would first try to fetch its list of models.
  if (slug === 'opencode') lines.push('ENV OPENCODE_DISABLE_MODELS_FETCH "1"', 'ENV OPENCODE_DISABLE_AUTOUPDATE "1"');
  return lines;
}

export async function startHarness(slug: RealAgentSlug, options: { maxPods?: number } = {}): Promise<Harness> {
  const clis = await ensureAgentClis();
  const mock = await startModelMock();
  mock.requiredKey = MODEL_KEY;
  const scratch = fs.mkdtempSync(path.join('/var/tmp', `drover-agents-real-${slug}-`));
  fs.chmodSync(scratch, 0o755);
  let database: TestDatabase | null = null;
  let server: ServerProcess | null = null;
  let runner: RunnerProcess | null = null;
  const cleanup = async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    await mock.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  try {
    database = await createProcessTestDatabase(process.env.DROVER_TEST_REAL_AGENTS_DATABASE === 'postgres' ? 'postgres' : 'sqlite');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn' },
      // Slow to start on a loaded machine (these suites run beside others).
      timeoutMs: 90_000,
    });
    const apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const token = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
    expect(token.status).toBe(201);

    const workDir = path.join(scratch, 'runner');
    const agentHome = path.join(workDir, 'agent-home');
    fs.mkdirSync(workDir);
    writeAgentHome(agentHome, mock.url, { relay: true });
    const prices = path.join(scratch, 'prices.json');
    fs.writeFileSync(prices, JSON.stringify(PRICES));
    // The key in the runner's configured credentials, under the name the agent reads it from.
    fs.writeFileSync(path.join(workDir, 'credentials.json'), JSON.stringify({ [MOCK_KEY_VARIABLES[slug]]: MODEL_KEY }), { mode: 0o600 });
    // The stand-in is on loopback: the runner's operator allows it, as an operator would a local model proxy.
    const env: Record<string, string> = { PATH: runnerPath(clis.binDir), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_ALLOW_HOSTS: new URL(mock.url).host, DROVER_RUNNER_PRICES: prices };
    runner = await startRunnerProcess({
      server: server.url,
      token: (token.body as { token: string }).token,
      workDir,
      name: `real-${slug}`,
      maxPods: options.maxPods ?? 5,
      env,
      timeoutMs: 60_000,
    });
    const url = server.url;
    const api = (method: string, urlPath: string, body?: unknown) => http(url, method, urlPath, { key: apiKey, body });
    await waitFor(
      async () => {
        const r = (await api('GET', `${ORG}/runners/${runner!.runnerId}`)).body as { runner: { status: string } };
        return r.runner.status === 'online';
      },
      { timeout: 30_000, what: 'the runner to be online' },
    );

    const pod = async (key: string): Promise<PodView> => {
      const response = await api('GET', `${ORG}/pods/${key}`);
      expect(response.status, response.text).toBe(200);
      return (response.body as { pod: PodView }).pod;
    };
    return {
      slug,
      server,
      runner,
      mock,
      clis,
      agentHome,
      api,
      async createPod(script, lines = agentLines(slug, mock.url)) {
        const layer = [...lines, `PROMPT "mock-script:${script} Do the task."`].join('\n');
        const response = await api('POST', `${ORG}/pods`, { agent_slug: slug, agentfile_layer: layer });
        expect(response.status, response.text).toBe(201);
        return (response.body as { pod: { pod_key: string } }).pod.pod_key;
      },
      pod,
      waitEnded: (key, timeoutMs = 120_000) =>
        waitFor(
          async () => {
            const view = await pod(key);
            return ['completed', 'failed', 'terminated'].includes(view.status) ? view : undefined;
          },
          { timeout: timeoutMs, interval: 200, what: `pod ${key} to end` },
        ),
      async output(key) {
        const response = await api('GET', `${ORG}/pods/${key}/output`);
        expect(response.status).toBe(200);
        return (response.body as { output: string }).output;
      },
      close: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Waits until no process of pod `key` is left (the kill grace and some), then kills whatever is
 * left and returns it, as `<pid> <command line>`.
 */
export async function processesLeft(key: string): Promise<string[]> {
  await waitFor(() => podProcesses(key).length === 0, { timeout: KILL_GRACE_MS + 10_000, interval: 250, what: `the processes of pod ${key} to end` }).catch(() => {
    // Reported below.
  });
  const pids = podProcesses(key);
  const left = pids.map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return left;
}
