/**
 * The tests every real agent CLI goes through (docs/agents.md), driven through the REST API from a
 * pod, on a real server and runner (harness.ts), against the CLI's model stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAgent } from '../../src/agents/index.ts';
import type { RealAgentSlug } from '../helpers/agent-clis.ts';
import type { MockRequest } from '../helpers/model-mocks/server.ts';
import { commandLine, podProcesses, waitFor } from '../helpers/runner-process.ts';
import { agentLines, MODEL_KEY, ORG, processesLeft, startHarness, type Harness, type PodView } from './harness.ts';

export interface RealAgentExpectations {
  /** Which of the stand-in's answers the CLI counts in its usage: the script's (`main`), or its side requests' too (`all`). */
  usageCounts: 'main' | 'all';
  /** The usage figures the CLI does not report (null on the pod). */
  unreported: readonly (keyof PodView['usage'])[];
  /** Figures the CLI reports as 0 because the stand-in's API has no such notion. */
  zero: readonly (keyof PodView['usage'])[];
  /** Turns counted, one per model answer (`main`), or not at all. */
  /** `all`: one turn per model call the relay saw (docs/agents.md "The model relay"). */
  turns: 'main' | 'all' | null;
  /** A pattern of the session ids the CLI reports. */
  sessionId: RegExp;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SESSION_UUID = UUID;

let counter = 0;
const unique = (what: string) => `${what}-${process.pid}-${++counter}`;

function sum(requests: MockRequest[], pick: (u: NonNullable<MockRequest['usage']>) => number): number {
  return requests.reduce((total, r) => total + (r.usage ? pick(r.usage) : 0), 0);
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
      const counted = expectations.usageCounts === 'main' ? main : requests.filter((r) => !r.refused);
      const expected: Record<string, number | null> = {
        input_tokens: sum(counted, (u) => u.input),
        output_tokens: sum(counted, (u) => u.output),
        cache_read_tokens: sum(counted, (u) => u.cacheRead),
        cache_write_tokens: sum(counted, (u) => u.cacheWrite),
        turns: expectations.turns === 'main' ? main.length : expectations.turns === 'all' ? counted.length : null,
      };
      for (const field of expectations.unreported) if (field !== 'cost_usd') expected[field] = null;
      for (const field of expectations.zero) expected[field] = 0;
      const { cost_usd: cost, ...tokens } = pod.usage;
      expect(tokens).toEqual(expected);
      if (expectations.unreported.includes('cost_usd')) expect(cost).toBeNull();
      else expect(cost).toBeGreaterThan(0);
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
    }, 180_000);

    it('the API key reaches the agent only through CREDENTIAL, and shows nowhere in the pod', async () => {
      const withKey = unique('key');
      h.mock.script(withKey, [{ text: 'Keyed.' }]);
      const keyed = await h.createPod(withKey);
      const done = await h.waitEnded(keyed);
      expect(done.status).toBe('completed');
      expect(h.mock.conversationOf(withKey).every((r) => r.apiKey === MODEL_KEY)).toBe(true);
      expect(JSON.stringify(done)).not.toContain(MODEL_KEY);
      expect(await h.output(keyed)).not.toContain(MODEL_KEY);

      // The same agentfile without the CREDENTIAL line: the runner has the key, the agent does not.
      const without = unique('nokey');
      h.mock.script(without, [{ text: 'Should not be reached with the key.' }]);
      const unkeyed = await h.createPod(without, agentLines(h.slug, h.mock.url).filter((line) => !line.startsWith('CREDENTIAL')));
      const ended = await h.waitEnded(unkeyed);
      expect(h.mock.conversationOf(without).some((r) => r.apiKey === MODEL_KEY)).toBe(false);
      expect(h.mock.requestsOf(without)).toEqual([]);
      // Whatever the CLI made of it (an error, or its own message such as "Not logged in"), the model never answered.
      expect(ended.result).not.toBe('Should not be reached with the key.');
      expect(await h.output(unkeyed)).not.toContain(MODEL_KEY);
    }, 180_000);

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
      const one = await runLoop(h, slug, first);
      expect(one.status, one.error_message ?? '').toBe('completed');
      expect(one.result).toBe(`Noted ${proof}.`);
      expect(one.session_id).toMatch(expectations.sessionId);

      const second = unique('recall');
      h.mock.script(second, [{ text: 'Recalled.' }]);
      const two = await runLoop(h, slug, second);
      expect(two.status, two.error_message ?? '').toBe('completed');
      expect(two.result).toBe('Recalled.');
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
    }, 180_000);

    if (slug === 'claude-code') autopilotTests(() => h);
  });
}

interface RunView extends Pick<PodView, 'result' | 'session_id' | 'error_message'> {
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
function autopilotTests(harness: () => Harness): void {
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
    // Both iterations' usage is summed (each model answer counted once).
    expect(pod.usage.output_tokens).toBe(asked.reduce((total, r) => total + (r.usage?.output ?? 0), 0));
    expect(pod.usage.turns).toBe(4);
    expect(pod.session_id).toMatch(SESSION_UUID);
  });
}
