/**
 * The reading shared by the agents that print one JSON event a line (docs/transcripts.md "How
 * the output is read"): each line that is a JSON object goes to the format's handler; any other line (a CLI's
 * warnings on stderr, Drover's own `[drover] …` notes) becomes a `status` entry of its text; a
 * line that starts like JSON but does not parse (cut off by a kill, or by stderr text written into
 * it) is never shown raw, only counted; blank lines are dropped.
 */
import { LineSplitter, type Line } from './lines.ts';
import { eventMessage, type JsonObject } from './values.ts';
import { EntryWriter } from './writer.ts';
import type { TranscriptParser, TranscriptParserOptions } from './types.ts';

export type EventHandler = (event: JsonObject, writer: EntryWriter) => void;

/** An event type the format's handler does not know: its message as a status, or nothing when it carries none. */
export function otherEvent(event: JsonObject, writer: EntryWriter): void {
  const message = eventMessage(event);
  if (message !== null) writer.status(message);
}

function parseObject(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/** A line as a terminal shows it: a carriage return moves back to the start, so only the text after the last one stays. */
export function visibleText(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const cr = text.lastIndexOf('\r');
  return (cr === -1 ? text : text.slice(cr + 1)).trimEnd();
}

/** Reads lines and hands each to `read`, with the writer positioned at the line's offset. */
export function lineParser(options: TranscriptParserOptions, read: (line: Line, writer: EntryWriter) => void): TranscriptParser {
  const lines = new LineSplitter(options.offset ?? 0, options.midLine ?? false);
  const writer = new EntryWriter();
  const each = (line: Line) => {
    writer.startLine(line.offset);
    if (line.skippedChars > 0) writer.status(`(an output line of ${line.skippedChars} characters was too long to read and was skipped)`);
    else read(line, writer);
  };
  return {
    write(chunk) {
      for (const line of lines.write(chunk)) each(line);
      return writer.take();
    },
    end() {
      for (const line of lines.end()) each(line);
      writer.flushText();
      return writer.take();
    },
  };
}

export function jsonLinesParser(handle: EventHandler, options: TranscriptParserOptions): TranscriptParser {
  return lineParser(options, (line, writer) => {
    const trimmed = line.text.trim();
    const event = trimmed.startsWith('{') ? parseObject(trimmed) : null;
    // The kept tail of a long output starts anywhere: a first line that is not a whole event is a piece of one.
    if (line.maybeCut && event === null) return;
    if (event !== null) handle(event, writer);
    else if (trimmed.startsWith('{')) writer.status(`(an output line of ${trimmed.length} characters that is not complete JSON was skipped)`);
    else writer.status(visibleText(line.text));
  });
}
