/**
 * A pod's transcript as the API answers it (`GET /pods/:key/transcript`, docs/transcripts.md): the
 * entries' shape and the value sets, shared by the parsers (src/agents/transcript/), the API schema,
 * the CLI and the dashboard; and `changedLines`, how a file edit is shown as a diff (CLI, dashboard).
 */

export const TRANSCRIPT_KINDS = ['text', 'tool_call', 'tool_result', 'error', 'status'] as const;
export type TranscriptKind = (typeof TRANSCRIPT_KINDS)[number];

/** The machine-readable outputs Drover reads, by the built-in agent that prints them; `plain` for lines of text. */
export const TRANSCRIPT_FORMATS = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'plain'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export const FILE_CHANGES = ['add', 'write', 'update', 'delete'] as const;

/**
 * One change a file tool made: `add` (a new file), `write` (the whole file written, new or not),
 * `update` (`old_text` replaced by `new_text` within the file), `delete`. A text is null where the
 * agent's output does not carry it (Codex names the files it changed, not their content).
 */
export interface FileEdit {
  path: string;
  change: (typeof FILE_CHANGES)[number];
  old_text: string | null;
  new_text: string | null;
}

export interface ToolInfo {
  /** The tool's name as the agent calls it (`Bash`, `write_file`, `mcp__drover__channel_post`, …). */
  name: string;
  /** Its arguments as the agent gave them (calls); null on results. */
  input: unknown;
  /** What it returned (results); null on calls. */
  output: string | null;
  is_error: boolean;
  /** On a result: the `seq` of its call, null when the call is not in the output read. Null on calls. */
  call_seq: number | null;
  /** Shell tools: the command line (on the call and on its result); null for other tools. */
  command: string | null;
  /** File tools: what the call changes (calls only); null for other tools and on results. */
  edits: FileEdit[] | null;
}

export interface TranscriptEntry {
  /**
   * Increasing, stable for the pod's life, not consecutive: the byte offset in the pod's output of
   * the line the entry comes from, plus its place among that line's entries.
   */
  seq: number;
  kind: TranscriptKind;
  /** What a reader sees: the message; a tool call's one-line title (`$ <command>` for shell tools); a result's output. */
  text: string;
  tool: ToolInfo | null;
}

/**
 * The lines a file edit changes, for showing it as a diff: the old and the new text as lines,
 * without the lines they share at both ends.
 */
const lines = (text: string | null): string[] => (text === null || text === '' ? [] : text.replace(/\n+$/, '').split('\n'));

export function changedLines(edit: Pick<FileEdit, 'old_text' | 'new_text'>): { removed: string[]; added: string[] } {
  const before = lines(edit.old_text);
  const after = lines(edit.new_text);
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { removed: before.slice(start, before.length - end), added: after.slice(start, after.length - end) };
}
