/**
 * The tests every real agent CLI goes through (docs/agents.md), driven through the REST API from a
 * pod, on a real server and runner (harness.ts), against the CLI's model stand-in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAgent } from '../../src/agents/index.ts';
import type { ModelProviderId } from '../../src/agents/model-providers.ts';
import { PriceTable } from '../../src/runner/relay/pricing.ts';
import { MOCK_KEY_VARIABLES, type RealAgentSlug } from '../helpers/agent-clis.ts';
import type { MockRequest } from '../helpers/model-mocks/server.ts';
import { commandLine, podProcesses, waitFor } from '../helpers/runner-process.ts';
import { agentLines, MODEL_KEY, ORG, PRICES, processesLeft, startHarness, type Harness, type PodView } from './harness.ts';

export interface RealAgentExpectations {
  /** A pattern of the session ids the CLI reports. */
  sessionId: RegExp;
  /**
   * Whose count the pod's `turns` is: the CLI's own (it reports turns as it means them: one per
   * answer of its conversation, side requests not counted), or the relay's (one per call) for a
   * CLI that reports none (docs/agents.md "The model relay").
   */
  turns: 'agent' | 'relay';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SESSION_UUID = UUID;

let counter = 0;
const unique = (what: string) => `${what}-${process.pid}-${++counter}`;

const PROVIDER_OF_FORMAT: Record<string, ModelProviderId> = { anthropic: 'anthropic', 'openai-responses': 'openai', 'openai-chat': 'openai', gemini: 'gemini' };
const prices = new PriceTable(PRICES);

/**
 * What the relay makes of the stand-in's answers `requests` (docs/agents.md "The model relay"):
 * each answer with usage is one call, one turn, its tokens as the stand-in reported them (only
 * Anthropic's shape has cache writes), priced by the model it names, with the runner's prices.
 */
export function relayedUsage(requests: MockRequest[]): PodView['usage'] {
  const calls = requests.filter((r) => r.usage && !r.refused);
  const total = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, turns: calls.length };
  for (const call of calls) {
    const u = call.usage!;
    const provider = PROVIDER_OF_FORMAT[call.format];
    const usage = {
      model: typeof call.body.model === 'string' ? call.body.model : (/\/models\/([^/:]+)/.exec(call.url)?.[1] ?? null),
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_tokens: u.cacheRead,
      cache_write_tokens: provider === 'anthropic' ? u.cacheWrite : 0,
    };
    const cost = prices.cost(provider, usage);
    expect(cost, `a price for ${provider} ${usage.model}`).not.toBeNull();
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
    total.cache_write_tokens += usage.cache_write_tokens;
    total.cost_usd += cost!;
  }
  return total;
}

/**
 * `actual` is the relay's sum over the calls of a pod, `requests` since the pod was created whose
 * conversation names `script` (or no script: side requests such as a title's): the tokens exactly,
 * the cost to the nano-dollar, the turns as the CLI counts them (`agent`: the answers of its
 * conversation) or as the relay does.
 */
function expectRelayed(actual: PodView['usage'], since: MockRequest[], script: string, turns: RealAgentExpectations['turns']): void {
  const what = `the usage of the pod of ${script}`;
  const requests = since.filter((r) => r.marker === script || r.marker === 'default');
  const { cost_usd: cost, ...expected } = relayedUsage(requests);
  const { cost_usd: actualCost, ...tokens } = actual;
  expect(expected.turns, `${what}: calls with usage`).toBeGreaterThan(0);
  if (turns === 'agent') expected.turns = requests.filter((r) => r.script !== null && r.usage && !r.refused).length;
  expect(tokens, what).toEqual(expected);
  expect(actualCost, what).toBeCloseTo(cost!, 8);
}

export function realAgentSuite(slug: RealAgentSlug, expectations: RealAgentExpectations): void {
  describe(`${slug} (the published CLI, through a pod)`, () => {
    let h: Harness;

    beforeAll(async () => {
      h = await startHarness(slug);
    }, 15 * 60_000);
    afterAll(async () => {
      await h?.close();
    });

    it('writes a file in its workspace with its own shell tool and completes with result, session_id and usage', async () => {
      const script = unique('write');
      const proof = `proof-${script}`;
      h.mock.script(script, [{ shell: `printf '%s\\n' ${proof} > proof.txt && cat proof.txt && pwd` }, { text: `Wrote proof.txt for ${script}.` }]);
      const before = h.mock.requests.length;
      const key = await h.createPod(script);
      const pod = await h.waitEnded(key);
      const output = await h.output(key);
      expect(pod.status, `${pod.error_message}\n${output.slice(-3000)}`).toBe('completed');

      // The tool's result, as the CLI sent it back to the model: the file was written and read back
      // in the pod's workspace.
      const requests = h.mock.conversationOf(script);
      const toolOutput = requests.flatMap((r) => r.conversation.messages.map((m) => m.toolOutput)).join('\n');
      expect(toolOutput).toContain(proof);
      expect(toolOutput).toContain(`/pods/${key}`);

      expect(pod.result).toBe(`Wrote proof.txt for ${script}.`);
      expect(pod.session_id).toMatch(expectations.sessionId);
      expect(output).toContain(pod.session_id);

      const main = requests.filter((r) => r.script === script);
      expect(main.map((r) => r.turnIndex)).toEqual([0, 1]);
      // The pod's usage is the relay's: every call of the pod (side requests too), priced.
      expectRelayed(pod.usage, h.mock.requests.slice(before), script, expectations.turns);
    }, 180_000);

    it('has the drover MCP server (docs/mcp.md): the model calls channel_post, the message lands in the pod\'s channel as the agent, with the pod key', async () => {
      const created = await h.api('POST', `${ORG}/channels`, { name: unique('mcp-channel') });
      expect(created.status, created.text).toBe(201);
      const channelId = (created.body as { channel: { id: number } }).channel.id;
      const script = unique('mcp');
      const content = `hello over MCP from ${script}`;
      h.mock.script(script, [{ mcp: { server: 'drover', name: 'channel_post', input: { content } } }, { text: 'Posted to the channel.' }]);
      // Claude Code defers MCP tools behind its ToolSearch tool, which the stand-in does not play: it is turned off.
      const deferred = h.slug === 'claude-code' ? ['ENV ENABLE_TOOL_SEARCH "false"'] : [];
      const key = await h.createPod(script, [...agentLines(h.slug, h.mock.url), ...deferred, `CONFIG channel_id = ${channelId}`]);
      const pod = await h.waitEnded(key, 150_000).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${(await h.output(key)).slice(-4000)}\n${JSON.stringify(h.mock.requests.filter((r) => r.marker === script).map((r) => (r.body as { tools?: { name?: string }[] }).tools?.find((t) => t.name === 'mcp__drover'))[0]).slice(0, 3000)}`);
      });
      const output = await h.output(key);
      expect(pod.status, `${pod.error_message}\n${output.slice(-3000)}`).toBe('completed');
      expect(pod.result).toBe('Posted to the channel.');
      const messages = ((await h.api('GET', `${ORG}/channels/${channelId}/messages`)).body as { messages: { sender_type: string; pod_key: string | null; content: string }[] }).messages;
      // The tool's answer, as the CLI gave it back to the model (some CLIs quote it in JSON of their own): the message the API stored.
      const toolOutput = h.mock.conversationOf(script).flatMap((r) => r.conversation.messages.map((m) => m.toolOutput)).join('\n');
      expect(messages, `the tool's answer the model saw: ${toolOutput}\n${output.slice(-2000)}`).toContainEqual(expect.objectContaining({ sender_type: 'agent', pod_key: key, content }));
      expect(toolOutput).toMatch(/sender_type\\?":\\?"agent/);
      expect(toolOutput).toContain(key);
    }, 180_000);

    it('terminate during a long tool call (sleep 300) leaves no process of the pod behind', async () => {
      const script = unique('sleep');
      // Claude Code 2.1.3xx refuses a command that starts with a long sleep ("use Monitor"); after an echo it runs it.
      h.mock.script(script, [{ shell: 'echo waiting && sleep 300' }, { text: 'Slept.' }]);
      const key = await h.createPod(script);
      await waitFor(() => podProcesses(key).some((pid) => /(^|\/)sleep 300$/.test(commandLine(pid))), {
        timeout: 120_000,
        interval: 250,
        what: `the agent of pod ${key} to run sleep 300`,
      });
      const response = await h.api('POST', `/api/v1/ext/orgs/default/pods/${key}/terminate`);
      expect(response.status, response.text).toBe(200);
      expect((await h.pod(key)).status).toBe('terminated');
      // Gemini CLI's and OpenCode's shell tools run the command in a session of their own, out of
      // reach of the agent's process group: the sandbox's PID namespace ends them with the pod.
      expect(await processesLeft(key)).toEqual([]);
    }, 180_000);

    it('every permission_mode of docs/agents.md reaches the CLI as a flag it accepts: it starts and completes', async () => {
      const modes = builtinAgent(slug)!.permissionModes;
      const pods = await Promise.all(
        modes.map(async (mode) => {
          const script = unique(`mode-${mode}`);
          h.mock.script(script, [{ text: `Ran in ${mode}.` }]);
          return { mode, script, key: await h.createPod(script, [...agentLines(h.slug, h.mock.url), `CONFIG permission_mode = ${mode}`]) };
        }),
      );
      for (const { mode, script, key } of pods) {
        const pod = await h.waitEnded(key);
        expect(pod.status, `${mode}: ${pod.error_message}\n${(await h.output(key)).slice(-2000)}`).toBe('completed');
        expect(pod.result).toBe(`Ran in ${mode}.`);
        expect(h.mock.requestsOf(script).length).toBeGreaterThan(0);
      }
      // Several pods at once: on a loaded machine an agent can take a minute each.
    }, 240_000);

    it('the API key reaches the agent only as the relay\'s placeholder (every process of the pod, its output, its files); the stand-in gets the real key', async () => {
      const withKey = unique('key');
      // The command waits for a file the test writes: meanwhile every process of the pod is looked at.
      h.mock.script(withKey, [{ shell: 'echo key-check; until [ -e go.txt ]; do sleep 0.2; done; echo key-check-done' }, { text: 'Keyed.' }]);
      const before = h.mock.requests.length;
      const keyed = await h.createPod(withKey);
      const environments = await waitFor(
        () => {
          const pids = podProcesses(keyed);
          if (!pids.some((pid) => commandLine(pid).includes('go.txt'))) return undefined;
          return pids.map((pid) => ({ pid, command: commandLine(pid), env: environmentOf(pid) }));
        },
        { timeout: 120_000, interval: 200, what: `the agent of pod ${keyed} to run its command` },
      );
      const variable = MOCK_KEY_VARIABLES[h.slug];
      for (const process of environments) {
        expect(process.env, process.command).not.toContain(MODEL_KEY);
        expect(process.command).not.toContain(MODEL_KEY);
      }
      // The agent itself (and whatever kept its environment) holds the placeholder.
      expect(environments.some((p) => p.env.split('\0').some((entry) => new RegExp(`^${variable}=sk-drover-relay-[0-9a-f]{48}$`).test(entry)))).toBe(true);
      // Its HOME and workspace, while it runs (the runner removes them when it ends).
      const podDir = path.join(h.runner.workDir, 'pods', keyed);
      expect(filesHolding(podDir, MODEL_KEY)).toEqual([]);
      expect(fs.readdirSync(path.join(podDir, 'home')).length).toBeGreaterThan(0);
      fs.writeFileSync(path.join(podDir, 'workspace', 'go.txt'), '');
      const done = await h.waitEnded(keyed);
      expect(done.status, done.error_message ?? '').toBe('completed');
      expect(done.result).toBe('Keyed.');
      // Every call reached the stand-in with the real key, put there by the relay.
      const calls = h.mock.requests.slice(before).filter((r) => r.marker === withKey);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.map((r) => r.apiKey)).toEqual(calls.map(() => MODEL_KEY));
      expect(JSON.stringify(done)).not.toContain(MODEL_KEY);
      expect(await h.output(keyed)).not.toContain(MODEL_KEY);
      expectRelayed(done.usage, h.mock.requests.slice(before), withKey, expectations.turns);

      // The same agentfile without the CREDENTIAL line: the runner has the key, the agent does not.
      const without = unique('nokey');
      h.mock.script(without, [{ text: 'Should not be reached with the key.' }]);
      const unkeyed = await h.createPod(without, agentLines(h.slug, h.mock.url).filter((line) => !line.startsWith('CREDENTIAL')));
      const ended = await h.waitEnded(unkeyed);
      expect(h.mock.conversationOf(without).every((r) => r.refused)).toBe(true);
      expect(h.mock.requestsOf(without)).toEqual([]);
      // Whatever the CLI made of it (an error, or its own message such as "Not logged in"), the model never answered.
      expect(ended.result).not.toBe('Should not be reached with the key.');
      expect(await h.output(unkeyed)).not.toContain(MODEL_KEY);
    }, 240_000);

    it('a persistent loop with session_persistence, its key (CREDENTIAL) and endpoint in agentfile_layer: run 2 resumes run 1’s session, the model sees the earlier conversation', async () => {
      const slug = unique('session-loop').toLowerCase();
      const layer = agentLines(h.slug, h.mock.url).join('\n');
      const created = await h.api('POST', `${ORG}/loops`, {
        name: slug,
        slug,
        agent_slug: h.slug,
        prompt_template: 'mock-script:{{script}} Do the task.',
        execution_mode: 'direct',
        sandbox_strategy: 'persistent',
        session_persistence: true,
        runner_id: h.runner.runnerId,
        agentfile_layer: layer,
      });
      expect(created.status, created.text).toBe(201);
      expect((created.body as { loop: { agentfile_layer: string } }).loop.agentfile_layer).toBe(layer);

      const first = unique('remember');
      const proof = `proof-${first}`;
      h.mock.script(first, [{ text: `Noted ${proof}.` }]);
      const start = h.mock.requests.length;
      const one = await runLoop(h, slug, first);
      const between = h.mock.requests.length;
      expect(one.status, one.error_message ?? '').toBe('completed');
      expect(one.result).toBe(`Noted ${proof}.`);
      expect(one.session_id).toMatch(expectations.sessionId);

      const second = unique('recall');
      h.mock.script(second, [{ text: 'Recalled.' }]);
      const two = await runLoop(h, slug, second);
      expect(two.status, two.error_message ?? '').toBe('completed');
      expect(two.result).toBe('Recalled.');
      // Each run costs only its own calls, although run 2 resumed run 1's session (whose own report
      // would count it again): the relay's sum of that run's calls; the loop's total is the two.
      expectRelayed(one.usage, h.mock.requests.slice(start, between), first, expectations.turns);
      expectRelayed(two.usage, h.mock.requests.slice(between), second, expectations.turns);
      const loop = (await h.api('GET', `${ORG}/loops/${slug}`)).body as { loop: { total_cost_usd: number | null } };
      const both = h.mock.requests.slice(start).filter((r) => [first, second, 'default'].includes(r.marker));
      expect(loop.loop.total_cost_usd).toBeCloseTo(relayedUsage(both).cost_usd!, 8);
      // The model's view of run 2: run 1's prompt and answer come first, then run 2's prompt.
      const asked = h.mock.requestsOf(second);
      expect(asked.length).toBeGreaterThan(0);
      for (const request of asked) {
        const texts = request.conversation.messages.map((m) => m.text);
        const earlier = texts.findIndex((text) => text.includes(`mock-script:${first}`));
        const answer = texts.findIndex((text) => text.includes(`Noted ${proof}.`));
        const now = texts.findIndex((text) => text.includes(`mock-script:${second}`));
        expect(earlier, JSON.stringify(texts).slice(0, 2000)).toBeGreaterThanOrEqual(0);
        expect(answer).toBeGreaterThan(earlier);
        expect(now).toBeGreaterThan(answer);
        expect(request.apiKey).toBe(MODEL_KEY);
      }
      // Run 1's conversation did not know run 2's.
      expect(h.mock.requestsOf(first).every((r) => r.conversation.messages.every((m) => !m.text.includes(second)))).toBe(true);
    }, 360_000);

    if (slug === 'claude-code') autopilotTests(() => h, expectations);
  });
}

interface RunView extends Pick<PodView, 'result' | 'session_id' | 'error_message' | 'usage'> {
  id: number;
  status: string;
  pod_key: string | null;
}

/** Triggers a run of the loop with `script` as its template variable and waits for its end. */
async function runLoop(h: Harness, slug: string, script: string): Promise<RunView> {
  const triggered = await h.api('POST', `${ORG}/loops/${slug}/trigger`, { variables: { script } });
  expect(triggered.status, triggered.text).toBe(201);
  const id = (triggered.body as { run: RunView }).run.id;
  return waitFor(
    async () => {
      const run = (await h.api('GET', `${ORG}/loops/${slug}/runs/${id}`)).body as { run: RunView };
      return ['completed', 'failed', 'cancelled', 'timeout'].includes(run.run.status) ? run.run : undefined;
    },
    { timeout: 180_000, interval: 250, what: `run ${id} of ${slug} to end` },
  );
}

/** Autopilot with Claude Code (docs/agents.md): it reports through $DROVER_STATUS_FILE and continues its session. */
function autopilotTests(harness: () => Harness, expectations: RealAgentExpectations): void {
  const report = (status: string, summary: string) => ({ shell: `printf '%s\\n' '{"status": "${status}", "summary": "${summary}"}' > "$DROVER_STATUS_FILE"` });
  const autopilot = (h: Harness, script: string) => h.createPod(script, [...agentLines(h.slug, h.mock.url), 'MODE autopilot', 'CONFIG max_iterations = 5']);

  it('autopilot: told how to report, the agent writes "done" in iteration 1 and the pod completes after one iteration', async () => {
    const h = harness();
    const script = unique('ap-done');
    h.mock.script(script, [report('done', 'wrote nothing, all set'), { text: 'Reported done.' }]);
    const key = await autopilot(h, script);
    const pod = await h.waitEnded(key);
    expect(pod.status, `${pod.error_message}\n${(await h.output(key)).slice(-2000)}`).toBe('completed');
    expect(pod.error_message).toBeNull();
    expect(pod.result).toBe('Reported done.');
    const asked = h.mock.requestsOf(script);
    expect(asked.map((r) => r.turnIndex)).toEqual([0, 1]);
    const prompt = asked[0].conversation.messages.find((m) => m.text.includes(`mock-script:${script}`))!.text;
    expect(prompt).toContain('this is iteration 1 of at most 5');
    expect(prompt).toContain('DROVER_STATUS_FILE');
    // One iteration: one session, one result event in the output.
    expect((await h.output(key)).match(/"type":"result"/g)).toHaveLength(1);
  });

  it('autopilot: the prompt offers report_status of the drover MCP server; the agent calls it with "done" and the pod completes after one iteration', async () => {
    const h = harness();
    const script = unique('ap-mcp');
    h.mock.script(script, [{ mcp: { server: 'drover', name: 'report_status', input: { status: 'done', summary: 'reported over MCP' } } }, { text: 'Reported through the tool.' }]);
    // Claude Code defers MCP tools behind its ToolSearch tool, which the stand-in does not play: it is turned off.
    const key = await h.createPod(script, [...agentLines(h.slug, h.mock.url), 'ENV ENABLE_TOOL_SEARCH "false"', 'MODE autopilot', 'CONFIG max_iterations = 5']);
    const pod = await h.waitEnded(key);
    expect(pod.status, `${pod.error_message}\n${(await h.output(key)).slice(-2000)}`).toBe('completed');
    expect(pod).toMatchObject({ error_message: null, result: 'Reported through the tool.' });
    const asked = h.mock.requestsOf(script);
    expect(asked.map((r) => r.turnIndex)).toEqual([0, 1]);
    const prompt = asked[0].conversation.messages.find((m) => m.text.includes(`mock-script:${script}`))!.text;
    expect(prompt).toContain('call the tool report_status of the drover MCP server');
    expect(asked[0].conversation.tools).toContain('mcp__drover__report_status');
    const toolOutput = asked[1].conversation.messages.map((m) => m.toolOutput).join('\n');
    expect(toolOutput).toContain('reported over MCP');
  });

  it('autopilot: an agent that says "continue" is resumed with its own session in iteration 2 (a short continuation prompt), then reports done', async () => {
    const h = harness();
    const script = unique('ap-continue');
    h.mock.script(script, [report('continue', 'half of it'), { text: 'Half done.' }, report('done', 'the rest too'), { text: 'All done.' }]);
    const before = h.mock.requests.length;
    const key = await autopilot(h, script);
    const pod = await h.waitEnded(key);
    expect(pod.status, `${pod.error_message}\n${(await h.output(key)).slice(-2000)}`).toBe('completed');
    expect(pod).toMatchObject({ error_message: null, result: 'All done.' });
    const asked = h.mock.requestsOf(script);
    expect(asked.map((r) => r.turnIndex)).toEqual([0, 1, 2, 3]);
    // Iteration 2's first request carries iteration 1's conversation, then the continuation prompt.
    const texts = asked[2].conversation.messages.map((m) => m.text);
    const task = texts.findIndex((text) => text.includes(`mock-script:${script}`));
    const half = texts.findIndex((text) => text.includes('Half done.'));
    const again = texts.findIndex((text) => text.includes('Continue the task (Drover autopilot, iteration 2 of at most 5)'));
    expect(task).toBeGreaterThanOrEqual(0);
    expect(half).toBeGreaterThan(task);
    expect(again).toBeGreaterThan(half);
    expect(texts[again]).toContain('Your last report was "continue": "half of it"');
    expect(texts.filter((text) => text.includes(`mock-script:${script}`))).toHaveLength(1);
    // Both iterations' calls are summed by the relay, each counted once (iteration 2 resumed the session).
    expectRelayed(pod.usage, h.mock.requests.slice(before), script, expectations.turns);
    expect(pod.session_id).toMatch(SESSION_UUID);
  });
}

/** The environment of process `pid`, NUL-separated as the kernel keeps it ('' when it is gone). */
function environmentOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return '';
  }
}

/** The regular files below `dir` (links not followed) whose bytes hold `secret`, relative to `dir`. */
function filesHolding(dir: string, secret: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(secret)) found.push(path.relative(dir, file));
  }
  return found;
}
