/**
 * Reads an agent's stdout as it comes (any chunking) into an `AgentReport`: complete lines that
 * are JSON objects go to the agent's parser (parsers.ts); anything else (progress text, a line cut
 * off by a kill) is skipped. Memory stays bounded whatever the agent prints: one partial line is
 * kept, up to MAX_LINE_CHARS.
 */
import { eventParser, type AgentEvent } from './parsers.ts';
import { emptyReport, truncateUtf8, type AgentReport } from './usage.ts';

/** A longer line (a final message of megabytes) is skipped: its event is lost, the rest is read. */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export interface OutputReader {
  write(stdout: string): void;
  /** The report once the output has ended (a partial last line is read too). */
  end(): AgentReport;
}

function parseLine(line: string): AgentEvent | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as AgentEvent) : null;
  } catch {
    return null;
  }
}

export function outputReader(slug: string): OutputReader {
  const parser = eventParser(slug);
  let partial = '';
  let skipping = false;
  const take = (line: string) => {
    const event = parseLine(line);
    if (event && parser) parser.event(event);
  };
  return {
    write(stdout) {
      if (!parser) return;
      let start = 0;
      for (let newline = stdout.indexOf('\n'); newline !== -1; newline = stdout.indexOf('\n', start)) {
        if (!skipping) take(partial + stdout.slice(start, newline));
        partial = '';
        skipping = false;
        start = newline + 1;
      }
      if (skipping) return;
      partial += stdout.slice(start);
      if (partial.length > MAX_LINE_CHARS) {
        partial = '';
        skipping = true;
      }
    },
    end() {
      if (!parser) return emptyReport();
      if (!skipping && partial !== '') take(partial);
      partial = '';
      const report = parser.report();
      return { ...report, result: report.result === null ? null : truncateUtf8(report.result) };
    },
  };
}

/** The report of a complete output (e.g. a recorded one). */
export function parseAgentOutput(slug: string, stdout: string): AgentReport {
  const reader = outputReader(slug);
  reader.write(stdout);
  return reader.end();
}
