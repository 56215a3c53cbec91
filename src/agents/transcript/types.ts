/**
 * A pod's transcript: its output read as what the agent did (docs/transcripts.md). Everything in
 * this folder is plain TypeScript without Node-only imports, so the same parsers serve the server,
 * the command line client and (bundled) the dashboard.
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

export interface TranscriptParserOptions {
  /** The byte offset in the pod's output where the text fed starts (seqs count from it). */
  offset?: number;
  /**
   * The text may start inside a line (the kept tail of a longer output): its first line is dropped,
   * unless it is a whole JSON event of the format.
   */
  midLine?: boolean;
}

/**
 * Reads output as it comes (any chunking; a line may be split across chunks) and answers the entries
 * each chunk completes, in order. An entry, once answered, never changes.
 */
export interface TranscriptParser {
  write(chunk: string): TranscriptEntry[];
  /** The output has ended: the entries of its last, unterminated line and whatever was held back. */
  end(): TranscriptEntry[];
}
