/**
 * One parser per built-in agent's machine-readable output (the formats `builtin.ts` selects), fed
 * one JSON event (a line of stdout) at a time. Formats, as the pinned CLIs print them (samples in
 * test/fixtures/agent-output/):
 * - Claude Code `-p --output-format stream-json --verbose`: every event has `session_id`; the last
 *   is `{"type":"result", "result", "usage": {input_tokens, output_tokens,
 *   cache_read_input_tokens, cache_creation_input_tokens}, "total_cost_usd", "num_turns"}`.
 * - Codex `exec --json`: `thread.started` {thread_id}, `item.completed` {item: {type:
 *   "agent_message", text}}, `turn.completed` {usage: {input_tokens (cached included),
 *   cached_input_tokens, cache_write_input_tokens, output_tokens}} — the session's running total.
 * - Gemini CLI `--output-format stream-json`: `init` {session_id}, `message` {role: "assistant",
 *   content, delta}, `tool_use`, `tool_result`, `result` {stats: {input_tokens (cached included),
 *   input, cached, output_tokens}}.
 * - OpenCode `run --format json`: every event has `sessionID`; `text` {part: {text}}, `tool_use`,
 *   `step_finish` {part: {tokens: {input, output, reasoning, cache: {read, write}}, cost}} per model step.
 * The final message is the agent's text after its last tool call.
 */
import { SESSION_ID_PATTERN } from '../invocation.ts';
import { amount, emptyReport, type AgentReport } from './usage.ts';

export type AgentEvent = Record<string, unknown>;

export interface EventParser {
  event(event: AgentEvent): void;
  /** What was read; `result` not yet cut to size. */
  report(): AgentReport;
}

const record = (value: unknown): AgentEvent => (value && typeof value === 'object' && !Array.isArray(value) ? (value as AgentEvent) : {});
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const sessionId = (value: unknown): string | null => (typeof value === 'string' && SESSION_ID_PATTERN.test(value) ? value : null);
const minus = (a: number | null, b: number | null): number | null => (a === null ? null : Math.max(0, a - (b ?? 0)));

function claudeCode(): EventParser {
  // total_cost_usd covers every run of a resumed session (its tokens only this run's).
  const report: AgentReport = { ...emptyReport(), sessionTotalFields: ['cost_usd'] };
  return {
    event(e) {
      report.session_id = sessionId(e.session_id) ?? report.session_id;
      if (e.type !== 'result') return;
      report.result = text(e.result) ?? report.result;
      const usage = record(e.usage);
      report.usage = {
        input_tokens: amount(usage.input_tokens),
        output_tokens: amount(usage.output_tokens),
        cache_read_tokens: amount(usage.cache_read_input_tokens),
        cache_write_tokens: amount(usage.cache_creation_input_tokens),
        cost_usd: amount(e.total_cost_usd),
        turns: amount(e.num_turns),
      };
    },
    report: () => report,
  };
}

function codex(): EventParser {
  const report = { ...emptyReport(), sessionTotals: true };
  return {
    event(e) {
      if (e.type === 'thread.started') report.session_id = sessionId(e.thread_id) ?? report.session_id;
      const item = record(e.item);
      if (e.type === 'item.completed' && item.type === 'agent_message') report.result = text(item.text) ?? report.result;
      if (e.type !== 'turn.completed') return;
      const usage = record(e.usage);
      const cached = amount(usage.cached_input_tokens);
      report.usage = {
        input_tokens: minus(amount(usage.input_tokens), cached),
        output_tokens: amount(usage.output_tokens),
        cache_read_tokens: cached,
        cache_write_tokens: amount(usage.cache_write_input_tokens),
        cost_usd: null,
        turns: null,
      };
    },
    report: () => report,
  };
}

/** The text after the last tool call: collected, and dropped whenever a tool call or a new prompt comes. */
class FinalText {
  private parts: string[] = [];
  add(part: string): void {
    this.parts.push(part);
  }
  replace(part: string): void {
    this.parts = [part];
  }
  reset(): void {
    this.parts = [];
  }
  value(separator: string): string | null {
    const joined = this.parts.join(separator);
    return joined.trim() === '' ? null : joined;
  }
}

function geminiCli(): EventParser {
  const report = emptyReport();
  const final = new FinalText();
  return {
    event(e) {
      if (e.type === 'init') report.session_id = sessionId(e.session_id) ?? report.session_id;
      if (e.type === 'tool_use' || (e.type === 'message' && e.role === 'user')) final.reset();
      if (e.type === 'message' && e.role === 'assistant') {
        const content = text(e.content) ?? '';
        if (e.delta === true) final.add(content);
        else final.replace(content);
      }
      if (e.type !== 'result') return;
      const stats = record(e.stats);
      const cached = amount(stats.cached);
      report.usage = {
        input_tokens: amount(stats.input) ?? minus(amount(stats.input_tokens), cached),
        output_tokens: amount(stats.output_tokens),
        cache_read_tokens: cached,
        cache_write_tokens: null,
        cost_usd: null,
        turns: null,
      };
    },
    report: () => ({ ...report, result: final.value('') }),
  };
}

function opencode(): EventParser {
  const report = emptyReport();
  const final = new FinalText();
  const sum = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  return {
    event(e) {
      const part = record(e.part);
      report.session_id = sessionId(e.sessionID) ?? sessionId(part.sessionID) ?? report.session_id;
      if (e.type === 'tool_use') final.reset();
      if (e.type === 'text') final.add(text(part.text) ?? '');
      if (e.type !== 'step_finish') return;
      const tokens = record(part.tokens);
      const cache = record(tokens.cache);
      const u = report.usage;
      u.input_tokens = sum(u.input_tokens, amount(tokens.input));
      u.output_tokens = sum(u.output_tokens, sum(amount(tokens.output), amount(tokens.reasoning)));
      u.cache_read_tokens = sum(u.cache_read_tokens, amount(cache.read));
      u.cache_write_tokens = sum(u.cache_write_tokens, amount(cache.write));
      u.cost_usd = sum(u.cost_usd, amount(part.cost));
      u.turns = sum(u.turns, 1);
    },
    report: () => ({ ...report, result: final.value('\n') }),
  };
}

const PARSERS: Record<string, () => EventParser> = { 'claude-code': claudeCode, codex, 'gemini-cli': geminiCli, opencode };

/** The parser of a built-in agent's output, or null for an agent that prints nothing Drover reads (aider, shell, custom). */
export function eventParser(slug: string): EventParser | null {
  return Object.hasOwn(PARSERS, slug) ? PARSERS[slug]() : null;
}
