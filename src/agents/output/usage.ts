/**
 * What Drover reads from an agent's machine-readable output (docs/agents.md "Results"), and the
 * arithmetic on usage: sums over autopilot iterations, and the share of one run in a session total.
 *
 * `input_tokens` counts input the model read that was neither read from nor written to a prompt
 * cache, whatever the CLI calls it (Anthropic reports it so; OpenAI and Gemini include cached
 * tokens in their input count, which the parsers subtract), so that
 * input + cache_read + cache_write is everything the model read.
 */
export interface AgentUsage {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  /** Model turns (requests of the agent loop), where the CLI counts them. */
  turns: number | null;
}

export interface AgentReport {
  /** The agent's final message, at most RESULT_MAX_BYTES of UTF-8; null when it gave none. */
  result: string | null;
  session_id: string | null;
  usage: AgentUsage;
  /**
   * The usage is the session's running total, not this run's (Codex reports it so): a run that
   * resumed a session counts only what was added since the total last seen.
   */
  sessionTotals: boolean;
  /**
   * Fields that are the session's running total although the rest is this run's: Claude Code
   * reports `total_cost_usd` for the whole resumed session, its tokens for the run.
   */
  sessionTotalFields?: readonly UsageField[];
}

export type UsageField = keyof AgentUsage;

export const USAGE_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_usd', 'turns'] as const;
export const RESULT_MAX_BYTES = 64 * 1024;

export const emptyUsage = (): AgentUsage => ({
  input_tokens: null,
  output_tokens: null,
  cache_read_tokens: null,
  cache_write_tokens: null,
  cost_usd: null,
  turns: null,
});

export const emptyReport = (): AgentReport => ({ result: null, session_id: null, usage: emptyUsage(), sessionTotals: false });

/** A count or amount as reported: a finite number ≥ 0, else null. */
export function amount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** Costs are kept to the nano-dollar, so sums of binary fractions do not grow tails. */
const roundCost = (value: number): number => Math.round(value * 1e9) / 1e9;

function combine(a: AgentUsage, b: AgentUsage, op: (x: number, y: number) => number): AgentUsage {
  const out = emptyUsage();
  for (const field of USAGE_FIELDS) {
    const x = a[field];
    const y = b[field];
    if (x === null && y === null) continue;
    const value = Math.max(0, op(x ?? 0, y ?? 0));
    out[field] = field === 'cost_usd' ? roundCost(value) : value;
  }
  return out;
}

/** a + b, field by field; a field neither reports stays null. */
export const addUsage = (a: AgentUsage, b: AgentUsage): AgentUsage => combine(a, b, (x, y) => x + y);

/** What `total` adds to `baseline` (an earlier total of the same session), field by field, never below 0. */
export function usageSince(total: AgentUsage, baseline: AgentUsage): AgentUsage {
  const out = combine(total, baseline, (x, y) => x - y);
  for (const field of USAGE_FIELDS) if (total[field] === null) out[field] = null;
  return out;
}

/** `text` cut to at most `maxBytes` of UTF-8, on a character boundary. */
export function truncateUtf8(text: string, maxBytes = RESULT_MAX_BYTES): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // Back to the first byte of the character the cut would split (continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
