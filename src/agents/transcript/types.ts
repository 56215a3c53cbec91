/**
 * A pod's transcript: its output read as what the agent did (docs/transcripts.md). Everything in
 * this folder is plain TypeScript without Node-only imports, so the same parsers serve the server,
 * the command line client and (bundled) the dashboard.
 */

export { TRANSCRIPT_KINDS, TRANSCRIPT_FORMATS, FILE_CHANGES } from '../../protocol/transcript.ts';
export type { TranscriptKind, TranscriptFormat, FileEdit, ToolInfo, TranscriptEntry } from '../../protocol/transcript.ts';
import type { TranscriptEntry } from '../../protocol/transcript.ts';

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
