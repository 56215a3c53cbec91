/**
 * Where the format parsers put entries: it numbers them (`seq`: the line's byte offset plus the
 * entry's place in the line), pairs results with their calls, merges a text the agent streams in
 * pieces, and collapses an error the agent repeats (Codex's `error` and `turn.failed`, Claude
 * Code's error message and its `result`).
 */
import type { ToolCall } from './values.ts';
import type { TranscriptEntry, TranscriptKind } from './types.ts';

interface OpenCall {
  seq: number;
  name: string;
  command: string | null;
}

export class EntryWriter {
  private out: TranscriptEntry[] = [];
  private lineOffset = 0;
  private index = 0;
  /** Calls waiting for their result, by the agent's call id. */
  private readonly calls = new Map<string, OpenCall>();
  /** A text still growing (streamed pieces) and the seq it took when it started. */
  private held: { seq: number; text: string } | null = null;
  private last: TranscriptEntry | null = null;

  /** The entries of the lines that follow belong to the line starting at this byte offset. */
  startLine(offset: number): void {
    this.lineOffset = offset;
    this.index = 0;
  }

  /** The entries written since the last take. */
  take(): TranscriptEntry[] {
    const entries = this.out;
    this.out = [];
    return entries;
  }

  private nextSeq(): number {
    return this.lineOffset + this.index++;
  }

  private push(kind: TranscriptKind, text: string, tool: TranscriptEntry['tool'] = null): TranscriptEntry {
    this.flushText();
    const entry: TranscriptEntry = { seq: this.nextSeq(), kind, text, tool };
    this.out.push(entry);
    this.last = entry;
    return entry;
  }

  text(text: string): void {
    if (text.trim() !== '') this.push('text', text);
  }

  status(text: string): void {
    if (text.trim() !== '') this.push('status', text);
  }

  /** An error; the same error said again right after is said once. */
  error(text: string): void {
    if (text.trim() === '' || (this.last?.kind === 'error' && this.last.text === text)) return;
    this.push('error', text);
  }

  /** A piece of a text the agent streams: one entry when the text ends (any other entry, or the end). */
  textPiece(piece: string): void {
    if (this.held) this.held.text += piece;
    else this.held = { seq: this.nextSeq(), text: piece };
  }

  flushText(): void {
    const held = this.held;
    this.held = null;
    if (!held || held.text.trim() === '') return;
    const entry: TranscriptEntry = { seq: held.seq, kind: 'text', text: held.text, tool: null };
    this.out.push(entry);
    this.last = entry;
  }

  hasCall(id: string): boolean {
    return this.calls.has(id);
  }

  call(id: string | null, call: ToolCall): void {
    const { name, input, command, edits, title } = call;
    const entry = this.push('tool_call', title, { name, input, output: null, is_error: false, call_seq: null, command, edits });
    if (id !== null) this.calls.set(id, { seq: entry.seq, name, command });
  }

  /** The result of call `id`; `name` stands in when the call is not in the output read. */
  result(id: string | null, output: string, isError: boolean, name = 'unknown'): void {
    const call = id === null ? undefined : this.calls.get(id);
    if (id !== null) this.calls.delete(id);
    this.push('tool_result', output, {
      name: call?.name ?? name,
      input: null,
      output,
      is_error: isError,
      call_seq: call?.seq ?? null,
      command: call?.command ?? null,
      edits: null,
    });
  }
}
