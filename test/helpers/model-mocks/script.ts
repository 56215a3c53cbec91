/**
 * What a stand-in model answers: scripts of turns, chosen per conversation, and the usage numbers
 * it reports. Shared by the four wire formats (anthropic.ts, openai-responses.ts, gemini.ts,
 * openai-chat.ts); each turns a request into a `Conversation` and a `Turn` into its own events.
 *
 * Choosing the turn is stateless, from the request alone, so any number of agents can talk to one
 * mock at once and a CLI that retries a request gets the same answer:
 * - the script is named in the prompt as `mock-script:<name>` (the last user message naming one
 *   wins: a resumed session carries the earlier prompts too); none named: `default`;
 * - the turn is the number of tool results the conversation holds after that message: turn 0
 *   answers the prompt, turn 1 the first tool result, …; past the end, the last turn repeats. A
 *   later user message that continues the task (Drover's autopilot continuation prompt, which
 *   names no script: the resumed session's first prompt still does) counts as one more, so a
 *   script can span autopilot iterations.
 * Requests that offer no tools (titles, routers, summaries) are side requests: they get a short
 * text, never a turn of the script.
 */

/** One answer of the model. */
export type Turn =
  /** A final text message. */
  | { text: string }
  /** A call of the CLI's own shell tool with this command line. */
  | { shell: string }
  /** A call of the CLI's own file-writing tool (path relative to the workspace). */
  | { write: { path: string; content: string } }
  /**
   * A call of an MCP tool the CLI offers: `server`'s tool `name` under whatever name the CLI gives
   * it (`mcp__drover__channel_post`, `mcp_drover_channel_post`, Codex's namespace `mcp__drover` holding `channel_post`, …).
   */
  | { mcp: { server: string; name: string; input: Record<string, unknown> } };

/**
 * The model API refuses the request with this HTTP status and message, in an error body every
 * wire format's clients read (`{type: "error", error: {type, code, status, message}}`). Use a
 * status the CLIs do not retry (400), so they report the error at once.
 */
export interface ModelFailure {
  fail: { status: number; message: string };
}

/** One step of a script: an answer, or a refusal. */
export type ScriptStep = Turn | ModelFailure;

export type Script = readonly ScriptStep[];

/** The built-in scripts; tests add their own with `MockServer.script(name, turns)`. */
export const DEFAULT_SCRIPTS: Record<string, Script> = {
  default: [{ text: 'Nothing to do.' }],
};

export const SCRIPT_MARKER = /mock-script:([A-Za-z0-9_-]+)/g;
/** Drover's autopilot continuation prompt (src/agents/autopilot.ts `continuationPrompt`). */
export const CONTINUATION = /Continue the task \(Drover autopilot, iteration \d+/;

/** The model's view of a conversation, whatever the wire format. */
export interface Conversation {
  /** Tool names the request offers (empty for side requests). */
  tools: string[];
  /** The messages, oldest first: user texts, and how many tool results each carries. */
  messages: { role: 'user' | 'assistant' | 'system'; text: string; toolResults: number; /** What the tools returned, as text. */ toolOutput: string }[];
}

/** The usage a stand-in reports for one response (each wire format words it its own way). */
export interface MockUsage {
  /** Input tokens not read from a cache. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * Usage of the n-th response of a conversation (n from 0): distinct numbers per response, so a sum
 * over a session can be told from any single response.
 */
export function usageFor(turnIndex: number): MockUsage {
  return { input: 1000 + 100 * turnIndex, output: 50 + 10 * turnIndex, cacheRead: 200, cacheWrite: 20 };
}

export function scriptName(conversation: Conversation): { name: string; anchor: number } {
  for (let i = conversation.messages.length - 1; i >= 0; i--) {
    const message = conversation.messages[i];
    if (message.role !== 'user') continue;
    const names = [...message.text.matchAll(SCRIPT_MARKER)];
    if (names.length > 0) return { name: names[names.length - 1][1], anchor: i };
  }
  return { name: 'default', anchor: -1 };
}

/** Which turn of which script answers this request, or `null` for a side request. */
export function chooseTurn(conversation: Conversation, scripts: Record<string, Script>): { script: string; index: number; turn: ScriptStep } | null {
  if (conversation.tools.length === 0) return null;
  const { name, anchor } = scriptName(conversation);
  const script = scripts[name] ?? scripts.default;
  const index = conversation.messages
    .slice(anchor + 1)
    .reduce((n, m) => n + m.toolResults + (m.role === 'user' && m.toolResults === 0 && CONTINUATION.test(m.text) ? 1 : 0), 0);
  return { script: name, index, turn: script[Math.min(index, script.length - 1)] };
}

/** A tool of the CLI that runs a shell command, by the names each CLI gives it. */
export function pickTool(offered: string[], candidates: readonly string[]): string {
  const found = candidates.find((name) => offered.includes(name));
  if (!found) throw new Error(`none of the tools ${candidates.join(', ')} is offered (offered: ${offered.join(', ')})`);
  return found;
}

/** The name under which the CLI offers an MCP server's tool: it names the server and ends with the tool's name. */
export function pickMcpTool(offered: string[], server: string, name: string): string {
  const found = offered.find((n) => n.includes(server) && (n.endsWith(`_${name}`) || n.endsWith(`:${name}`)));
  if (!found) throw new Error(`the MCP tool ${server}/${name} is not offered (offered: ${offered.join(', ')})`);
  return found;
}

/** Text of any JSON-ish content: strings, `{text}` parts, arrays of them. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('\n');
  if (content && typeof content === 'object') {
    const record = content as Record<string, unknown>;
    if (typeof record.text === 'string') return record.text;
    if ('content' in record) return textOf(record.content);
  }
  return '';
}
