/**
 * Output cut into lines as it comes, each with the byte offset (UTF-8) where it starts in the
 * pod's output: entries take their `seq` from it. Memory stays bounded: one partial line is held,
 * up to MAX_LINE_CHARS; a longer line is counted and skipped.
 */

/** A longer line is skipped (its entries are lost; the parsers say so with a status entry). */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export interface Line {
  text: string;
  /** Byte offset of the line's first byte in the pod's output. */
  offset: number;
  /** The first line of a text that may start inside a line (see `TranscriptParserOptions.midLine`). */
  maybeCut: boolean;
  /** The line was longer than MAX_LINE_CHARS: `text` is empty and this is how many characters it had. */
  skippedChars: number;
}

/** Bytes of `text` in UTF-8 (a lone surrogate counts as U+FFFD, as encoders write it). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export class LineSplitter {
  private partial = '';
  /** Where the line being gathered starts. */
  private lineOffset: number;
  private skippedChars = 0;
  private skippedBytes = 0;
  private first: boolean;

  constructor(offset = 0, midLine = false) {
    this.lineOffset = offset;
    this.first = midLine;
  }

  write(chunk: string): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (let newline = chunk.indexOf('\n'); newline !== -1; newline = chunk.indexOf('\n', start)) {
      this.take(chunk.slice(start, newline));
      lines.push(this.finish(1));
      start = newline + 1;
    }
    this.take(chunk.slice(start));
    return lines;
  }

  /** The last line, when the output did not end with a newline. */
  end(): Line[] {
    if (this.partial === '' && this.skippedChars === 0) return [];
    return [this.finish(0)];
  }

  private take(piece: string): void {
    if (this.skippedChars > 0) {
      this.skippedChars += piece.length;
      this.skippedBytes += utf8Length(piece);
      return;
    }
    this.partial += piece;
    if (this.partial.length > MAX_LINE_CHARS) {
      this.skippedChars = this.partial.length;
      this.skippedBytes = utf8Length(this.partial);
      this.partial = '';
    }
  }

  private finish(newlineBytes: number): Line {
    const skipped = this.skippedChars > 0;
    const line: Line = { text: this.partial, offset: this.lineOffset, maybeCut: this.first, skippedChars: this.skippedChars };
    this.lineOffset += (skipped ? this.skippedBytes : utf8Length(this.partial)) + newlineBytes;
    this.partial = '';
    this.skippedChars = 0;
    this.skippedBytes = 0;
    this.first = false;
    return line;
  }
}
