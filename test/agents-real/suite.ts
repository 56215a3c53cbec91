/**
 * The tests every real agent CLI goes through (contract §10), driven through the REST API from a
 * pod, on a real server and runner (harness.ts), against the CLI's model stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAgent } from '../../src/agents/index.ts';
import type { RealAgentSlug } from '../helpers/agent-clis.ts';
import type { MockRequest } from '../helpers/model-mocks/server.ts';
import { commandLine, podProcesses, waitFor } from '../helpers/runner-process.ts';
import { agentLines, MODEL_KEY, processesLeft, startHarness, type Harness, type PodView } from './harness.ts';

export interface RealAgentExpectations {
  /** Which of the stand-in's answers the CLI counts in its usage: the script's (`main`), or its side requests' too (`all`). */
  usageCounts: 'main' | 'all';
  /** The usage figures the CLI does not report (null on the pod). */
  unreported: readonly (keyof PodView['usage'])[];
  /** Figures the CLI reports as 0 because the stand-in's API has no such notion. */
  zero: readonly (keyof PodView['usage'])[];
  /** Turns counted, one per model answer (`main`), or not at all. */
  turns: 'main' | null;
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
        turns: expectations.turns === 'main' ? main.length : null,
      };
      for (const field of expectations.unreported) if (field !== 'cost_usd') expected[field] = null;
      for (const field of expectations.zero) expected[field] = 0;
      const { cost_usd: cost, ...tokens } = pod.usage;
      expect(tokens).toEqual(expected);
      if (expectations.unreported.includes('cost_usd')) expect(cost).toBeNull();
      else expect(cost).toBeGreaterThan(0);
    });

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

    it('every permission_mode of contract §10 reaches the CLI as a flag it accepts: it starts and completes', async () => {
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
    });

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
    });
  });
}
