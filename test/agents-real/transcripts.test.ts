/**
 * Transcripts of live pods of the four published CLIs (docs/transcripts.md; docs/transcripts.md), each run
 * by a real runner against its model stand-in (harness.ts): `GET /pods/:key/transcript` while the
 * agent works, then once it has ended. The model asks for a quick command, then a slow one, then
 * answers with a text; while the slow command runs, the transcript already shows the first command
 * with its output, and what it shows then is exactly the start of the final transcript.
 * SQLite only: these suites test the CLIs, not the database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptEntry } from '../../src/agents/transcript/index.ts';
import { REAL_AGENT_SLUGS } from '../helpers/agent-clis.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { ORG, startHarness, type Harness } from './harness.ts';

interface Transcript {
  entries: TranscriptEntry[];
  format: string;
  complete: boolean;
  last_seq: number | null;
}

describe.each(REAL_AGENT_SLUGS)('%s: the transcript of a live pod', (slug) => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(slug);
  }, 15 * 60_000);
  afterAll(async () => {
    await h?.close();
  });

  const transcript = async (key: string, query = ''): Promise<Transcript> => {
    const response = await h.api('GET', `${ORG}/pods/${key}/transcript${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body as Transcript;
  };

  it('shows each command with its output as the agent works, then the final text; what it showed live is the start of the whole', async () => {
    const script = `transcript-${process.pid}`;
    // The slow command waits for a file the test writes: it runs as long as the test needs, no longer.
    h.mock.script(script, [
      { shell: 'echo first-step-done' },
      { shell: 'until [ -e go.txt ]; do sleep 0.2; done; echo second-step-done' },
      { text: `Both steps done for ${script}.` },
    ]);
    const key = await h.createPod(script);
    const live = await waitFor(
      async () => {
        const seen = await transcript(key);
        return seen.entries.some((e) => e.kind === 'tool_result' && e.text.includes('first-step-done')) ? seen : undefined;
      },
      { timeout: 120_000, interval: 250, what: `the first command's output in the transcript of pod ${key}` },
    );
    expect(live.complete).toBe(false);
    expect(live.format).toBe(slug);
    const first = live.entries.find((e) => e.kind === 'tool_call' && e.tool!.command === 'echo first-step-done');
    expect(first?.text).toBe('$ echo first-step-done');
    expect(live.entries.some((e) => e.kind === 'tool_result' && e.text.includes('second-step-done'))).toBe(false);

    // Let the slow command end: it runs in the pod's workspace, under the runner's work dir (src/runner/workspaces.ts).
    fs.writeFileSync(path.join(h.runner.workDir, 'pods', key, 'workspace', 'go.txt'), '');
    const pod = await h.waitEnded(key);
    const final = await transcript(key);
    expect(final.complete).toBe(true);
    expect(final.entries.slice(0, live.entries.length)).toEqual(live.entries);
    const rest = await transcript(key, `?after=${live.last_seq}`);
    expect([...live.entries, ...rest.entries]).toEqual(final.entries);
    expect(pod.status, pod.error_message ?? '').toBe('completed');
    expect(final.entries.filter((e) => e.kind === 'text').at(-1)?.text).toBe(`Both steps done for ${script}.`);
    const second = final.entries.find((e) => e.kind === 'tool_result' && e.text.includes('second-step-done'))!;
    expect(second.tool!.command).toContain('until [ -e go.txt ]');
    expect(final.entries.some((e) => e.text.trimStart().startsWith('{"'))).toBe(false);
  }, 240_000);
});
