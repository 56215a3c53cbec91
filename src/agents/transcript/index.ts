/**
 * Transcript parsers (docs/transcripts.md): the output of a pod read as entries, by the format of
 * its agent. `plain` (`shell`, Aider, custom agents): one `text` entry a line, Drover's own
 * `[drover] …` notes as `status`, blank lines dropped.
 */
import { claudeCodeEvent } from './claude-code.ts';
import { codexEvent } from './codex.ts';
import { geminiCliEvent } from './gemini-cli.ts';
import { jsonLinesParser, lineParser, visibleText, type EventHandler } from './json-lines.ts';
import { opencodeEvent } from './opencode.ts';
import { TRANSCRIPT_FORMATS, type TranscriptEntry, type TranscriptFormat, type TranscriptParser, type TranscriptParserOptions } from './types.ts';

export * from './types.ts';
export { MAX_LINE_CHARS, utf8Length } from './lines.ts';
export { patchEdits } from './edits.ts';
export { changedLines } from './diff.ts';

const HANDLERS: Record<Exclude<TranscriptFormat, 'plain'>, EventHandler> = {
  'claude-code': claudeCodeEvent,
  codex: codexEvent,
  'gemini-cli': geminiCliEvent,
  opencode: opencodeEvent,
};

/** Drover's own lines in a pod's output (network refusals, dropped output). */
const NOTE_PREFIX = '[drover] ';

function plainParser(options: TranscriptParserOptions): TranscriptParser {
  return lineParser(options, (line, writer) => {
    if (line.maybeCut) return;
    const text = visibleText(line.text);
    if (text.startsWith(NOTE_PREFIX)) writer.status(text);
    else writer.text(text);
  });
}

export function isTranscriptFormat(value: string): value is TranscriptFormat {
  return (TRANSCRIPT_FORMATS as readonly string[]).includes(value);
}

/** The format of an agent's output: its own for the built-in agents that print JSON events, else `plain`. */
export function transcriptFormat(agentSlug: string): TranscriptFormat {
  return agentSlug !== 'plain' && isTranscriptFormat(agentSlug) ? agentSlug : 'plain';
}

export function transcriptParser(format: TranscriptFormat, options: TranscriptParserOptions = {}): TranscriptParser {
  return format === 'plain' ? plainParser(options) : jsonLinesParser(HANDLERS[format], options);
}

/** The transcript of a whole output (ended: nothing is held back). */
export function parseTranscript(format: TranscriptFormat, output: string, options: TranscriptParserOptions = {}): TranscriptEntry[] {
  const parser = transcriptParser(format, options);
  return [...parser.write(output), ...parser.end()];
}
