/**
 * Reading the agents' machine-readable output (src/agents/output): the final message, the session
 * id and the usage, from what the pinned CLIs really printed (test/fixtures/agent-output/, recorded
 * by scripts/capture-agent-output.ts against the model stand-ins), and the runner's sums over
 * autopilot iterations and resumed sessions (src/runner/pod-results.ts).
 *
 * The stand-ins report, for the n-th answer of a conversation (n from 0), input 1000 + 100·n tokens
 * not cached, 200 read from the cache, 20 written to it, and 50 + 10·n output tokens
 * (test/helpers/model-mocks/script.ts): a tool call and a final text make n = 0 and 1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RESULT_MAX_BYTES,
  addUsage,
  emptyUsage,
  outputReader,
  parseAgentOutput,
  usageSince,
  type AgentReport,
  type AgentUsage,
} from '../../src/agents/index.ts';
import { MAX_LINE_CHARS } from '../../src/agents/output/reader.ts';
import { PodResults, SessionTotals } from '../../src/runner/pod-results.ts';
import { usageFor } from '../helpers/model-mocks/script.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'agent-output');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

/** The stand-in's usage summed over its answers n = 0 … count-1. */
function mockTotals(count: number) {
  const answers = Array.from({ length: count }, (_, n) => usageFor(n));
  const sum = (pick: (u: ReturnType<typeof usageFor>) => number) => answers.reduce((total, u) => total + pick(u), 0);
  return { input: sum((u) => u.input), output: sum((u) => u.output), cacheRead: sum((u) => u.cacheRead), cacheWrite: sum((u) => u.cacheWrite) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('recorded output of the pinned CLIs', () => {
  const two = mockTotals(2);
  const one = mockTotals(1);

  it('claude-code: the result event gives the final text, tokens, cost and turns', () => {
    const report = parseAgentOutput('claude-code', fixture('claude-code-tool.jsonl'));
    expect(report).toEqual({
      result: 'I wrote proof.txt.',
      session_id: expect.stringMatching(UUID),
      usage: { input_tokens: two.input, output_tokens: two.output, cache_read_tokens: two.cacheRead, cache_write_tokens: two.cacheWrite, cost_usd: 0.01088, turns: 2 },
      sessionTotals: false,
      sessionTotalFields: ['cost_usd'],
    });
    // Every line names the session: the one of the result line is the one reported.
    const lines = fixture('claude-code-tool.jsonl').trim().split('\n');
    expect(JSON.parse(lines[lines.length - 1]).session_id).toBe(report.session_id);
    const resumed = parseAgentOutput('claude-code', fixture('claude-code-resumed.jsonl'));
    expect(resumed).toMatchObject({ result: 'The word was PAPAYA.', usage: { input_tokens: one.input, output_tokens: one.output, turns: 1 } });
  });

  it('codex: exec --json gives the thread id, the last agent message and the session total (cached input apart)', () => {
    const report = parseAgentOutput('codex', fixture('codex-tool.jsonl'));
    expect(report).toEqual({
      result: 'I wrote proof.txt.',
      session_id: expect.stringMatching(UUID),
      // Codex counts cached input within input_tokens; Drover's input_tokens leaves it out.
      usage: { input_tokens: two.input, output_tokens: two.output, cache_read_tokens: two.cacheRead, cache_write_tokens: 0, cost_usd: null, turns: null },
      sessionTotals: true,
    });
    // Resumed, Codex reports the whole session: the first run's answer and this one's.
    const resumed = parseAgentOutput('codex', fixture('codex-resumed.jsonl'));
    expect(resumed.usage).toMatchObject({ input_tokens: 2 * one.input, output_tokens: 2 * one.output, cache_read_tokens: 2 * one.cacheRead });
    expect(resumed.result).toBe('The word was PAPAYA.');
  });

  it('gemini-cli: init names the session; the result stats count the router request too; the text after the last tool call is the result', () => {
    const report = parseAgentOutput('gemini-cli', fixture('gemini-cli-tool.jsonl'));
    // The router's side request is answered with the usage of a first answer (n = 0).
    const router = mockTotals(1);
    expect(report).toEqual({
      result: 'I wrote proof.txt.',
      session_id: expect.stringMatching(UUID),
      usage: {
        input_tokens: two.input + router.input,
        output_tokens: two.output + router.output,
        cache_read_tokens: two.cacheRead + router.cacheRead,
        cache_write_tokens: null,
        cost_usd: null,
        turns: null,
      },
      sessionTotals: false,
    });
    expect(parseAgentOutput('gemini-cli', fixture('gemini-cli-resumed.jsonl'))).toMatchObject({ result: 'The word was PAPAYA.', usage: { input_tokens: 2 * one.input } });
  });

  it('opencode: sessionID on every event; step_finish parts sum tokens and cost; one turn per step', () => {
    const report = parseAgentOutput('opencode', fixture('opencode-tool.jsonl'));
    // Priced per million tokens in the agent-home template: input 3, output 15, cache read 0.3, cache write 3.75.
    const cost = (two.input * 3 + two.output * 15 + two.cacheRead * 0.3) / 1e6;
    expect(report).toEqual({
      result: 'I wrote proof.txt.',
      session_id: expect.stringMatching(/^ses_[A-Za-z0-9]+$/),
      usage: { input_tokens: two.input, output_tokens: two.output, cache_read_tokens: two.cacheRead, cache_write_tokens: 0, cost_usd: expect.closeTo(cost, 9), turns: 2 },
      sessionTotals: false,
    });
    expect(parseAgentOutput('opencode', fixture('opencode-resumed.jsonl'))).toMatchObject({ result: 'The word was PAPAYA.', usage: { turns: 1 } });
  });

  it('reads the same whatever the chunking (one character at a time, CRLF endings)', () => {
    for (const [slug, name] of [['claude-code', 'claude-code-tool.jsonl'], ['codex', 'codex-tool.jsonl'], ['gemini-cli', 'gemini-cli-tool.jsonl'], ['opencode', 'opencode-tool.jsonl']] as const) {
      const text = fixture(name);
      const whole = parseAgentOutput(slug, text);
      const reader = outputReader(slug);
      for (const ch of text.replaceAll('\n', '\r\n')) reader.write(ch);
      expect(reader.end(), slug).toEqual(whole);
    }
  });
});

describe('outputReader', () => {
  it('skips lines that are not JSON objects, and reads a last line without a newline', () => {
    const report = parseAgentOutput(
      'claude-code',
      ['progress: 10%', '[1,2]', '{"type":"result","result":"ok","session_id":"s-1","num_turns":1,"usage":{"input_tokens":5}', '{"type":"result","result":"done","session_id":"s-2","num_turns":3}'].join('\n'),
    );
    expect(report).toMatchObject({ result: 'done', session_id: 's-2', usage: { turns: 3, input_tokens: null } });
  });

  it('ignores negative, non-numeric and non-finite figures', () => {
    const report = parseAgentOutput('claude-code', '{"type":"result","result":"x","usage":{"input_tokens":-3,"output_tokens":"12","cache_read_input_tokens":1e999},"total_cost_usd":-1,"num_turns":2}');
    expect(report.usage).toEqual({ ...emptyUsage(), turns: 2 });
  });

  it(`cuts the final message to ${RESULT_MAX_BYTES} bytes of UTF-8 on a character boundary`, () => {
    const long = 'é'.repeat(RESULT_MAX_BYTES); // 2 bytes each
    const report = parseAgentOutput('claude-code', JSON.stringify({ type: 'result', result: `a${long}` }));
    expect(Buffer.byteLength(report.result!, 'utf8')).toBe(RESULT_MAX_BYTES - 1);
    expect(report.result!.startsWith('aé')).toBe(true);
    expect(report.result).not.toContain('\uFFFD');
  });

  it('skips a line longer than its limit and reads on', () => {
    const reader = outputReader('codex');
    reader.write('{"type":"thread.started","thread_id":"t-1"}\n{"type":"item.completed","item":{"type":"agent_message","text":"');
    for (let sent = 0; sent <= MAX_LINE_CHARS; sent += 1024 * 1024) reader.write('x'.repeat(1024 * 1024));
    reader.write('"}}\n{"type":"item.completed","item":{"type":"agent_message","text":"after"}}\n');
    expect(reader.end()).toMatchObject({ session_id: 't-1', result: 'after' });
  });

  it('the final text is what came after the last tool call (gemini-cli, opencode)', () => {
    const gemini = [
      '{"type":"init","session_id":"g-1"}',
      '{"type":"message","role":"assistant","content":"Let me ","delta":true}',
      '{"type":"message","role":"assistant","content":"look.","delta":true}',
      '{"type":"tool_use","tool_name":"run_shell_command"}',
      '{"type":"tool_result","status":"success"}',
      '{"type":"message","role":"assistant","content":"All ","delta":true}',
      '{"type":"message","role":"assistant","content":"done.","delta":true}',
    ].join('\n');
    expect(parseAgentOutput('gemini-cli', gemini).result).toBe('All done.');
    expect(parseAgentOutput('gemini-cli', '{"type":"init","session_id":"g-1"}\n{"type":"tool_use"}').result).toBeNull();
    const opencode = ['{"type":"text","sessionID":"ses_1","part":{"text":"Looking."}}', '{"type":"tool_use","sessionID":"ses_1","part":{}}', '{"type":"text","sessionID":"ses_1","part":{"text":"Fixed."}}'].join('\n');
    expect(parseAgentOutput('opencode', opencode).result).toBe('Fixed.');
  });

  it('aider, shell and custom agents report nothing', () => {
    for (const slug of ['aider', 'shell', 'my-agent']) {
      expect(parseAgentOutput(slug, '{"type":"result","result":"x","session_id":"s","total_cost_usd":1}\n')).toEqual({
        result: null,
        session_id: null,
        usage: emptyUsage(),
        sessionTotals: false,
      });
    }
  });
});

describe('usage arithmetic', () => {
  const u = (fields: Partial<AgentUsage>): AgentUsage => ({ ...emptyUsage(), ...fields });

  it('adds field by field; a field neither side reports stays null; costs keep to the nano-dollar', () => {
    expect(addUsage(u({ input_tokens: 5, cost_usd: 0.1 }), u({ input_tokens: 7, output_tokens: 1, cost_usd: 0.2 }))).toEqual(
      u({ input_tokens: 12, output_tokens: 1, cost_usd: 0.3 }),
    );
    expect(addUsage(emptyUsage(), emptyUsage())).toEqual(emptyUsage());
  });

  it('the share of a run in a session total never goes below zero', () => {
    expect(usageSince(u({ input_tokens: 30, output_tokens: 4, turns: null }), u({ input_tokens: 10, output_tokens: 9, turns: 2 }))).toEqual(
      u({ input_tokens: 20, output_tokens: 0 }),
    );
  });
});

describe('PodResults (runner): one report per run of the agent', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-pod-results-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const report = (fields: Partial<Omit<AgentReport, 'usage'>> & { usage?: Partial<AgentUsage> }): AgentReport => ({
    result: null,
    session_id: null,
    sessionTotals: false,
    ...fields,
    usage: { ...emptyUsage(), ...fields.usage },
  });

  it('autopilot iterations: usage summed, the last final message and session id kept', () => {
    const results = new PodResults(new SessionTotals(null));
    results.add(report({ result: 'first', session_id: 'a', usage: { input_tokens: 10, cost_usd: 0.5, turns: 2 } }));
    results.add(report({ usage: { input_tokens: 5, turns: 1 } }));
    results.add(report({ result: 'third', session_id: 'c', usage: { output_tokens: 3, cost_usd: 0.25 } }));
    expect(results.get()).toEqual({ result: 'third', session_id: 'c', usage: { ...emptyUsage(), input_tokens: 15, output_tokens: 3, cost_usd: 0.75, turns: 3 } });
  });

  it('session totals (Codex): a resumed session counts what it added since the total last seen, across pods of a persistent loop', () => {
    const first = new PodResults(SessionTotals.forPersistentKey(scratch, 'loop-7'));
    first.add(report({ session_id: 'thread-1', sessionTotals: true, usage: { input_tokens: 1000, output_tokens: 50 } }));
    expect(first.get().usage).toMatchObject({ input_tokens: 1000, output_tokens: 50 });
    // The loop's next run, in a new pod on the same runner, resumes thread-1.
    const second = new PodResults(SessionTotals.forPersistentKey(scratch, 'loop-7'));
    second.add(report({ session_id: 'thread-1', sessionTotals: true, usage: { input_tokens: 2200, output_tokens: 110 } }));
    expect(second.get().usage).toMatchObject({ input_tokens: 1200, output_tokens: 60 });
    // Another loop's sessions are its own.
    const other = new PodResults(SessionTotals.forPersistentKey(scratch, 'loop-8'));
    other.add(report({ session_id: 'thread-1', sessionTotals: true, usage: { input_tokens: 2200 } }));
    expect(other.get().usage.input_tokens).toBe(2200);
    expect(fs.readdirSync(path.join(scratch, 'session-usage')).sort()).toEqual(['loop-7.json', 'loop-8.json']);
  });
});
