/**
 * Parsing a transcript of 5,000 entries (docs/transcripts.md): what `GET /pods/:key/transcript`
 * does on every read, and what a client following a pod does chunk by chunk. The output is built
 * from what the real CLIs printed (test/fixtures/transcripts/*-work.out): their event lines
 * repeated, call ids made unique, until the parser gives 5,000 entries. Measured per format, whole
 * (one write) and in 64 KiB chunks (as the output stream delivers it). For scale: the server keeps
 * at most 1 MiB of output, which is what it parses per read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseTranscript, transcriptParser, type TranscriptFormat } from '../src/agents/transcript/index.ts';
import { ROOT, log, machineLine, round, runIfMain, summary, type Row } from './harness.ts';

const ENTRIES = 5000;
const RUNS = Number(process.env.BENCH_TRANSCRIPT_RUNS ?? 30);
const CHUNK = 64 * 1024;
const FORMATS: Exclude<TranscriptFormat, 'plain'>[] = ['claude-code', 'codex', 'gemini-cli', 'opencode'];

/** The recorded output's event lines after its first (the session start), repeated with unique ids until the transcript has `count` entries. */
function outputOf(format: TranscriptFormat, count: number): string {
  const recorded = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'transcripts', `${format}-work.out`), 'utf8');
  const lines = recorded.trimEnd().split('\n');
  const cycle = lines.slice(lines.findIndex((line) => line.startsWith('{')) + 1).join('\n') + '\n';
  const perCycle = parseTranscript(format, cycle).length;
  const parts: string[] = [];
  for (let i = 0; parts.length * perCycle < count; i++) parts.push(cycle.replace(/"(toolu|call|item|run_shell_command|write_file)_([A-Za-z0-9_]+)"/g, `"$1_$2_${i}"`));
  return parts.join('');
}

function time(what: () => number): { ms: ReturnType<typeof summary>; entries: number } {
  let entries = 0;
  for (let i = 0; i < 3; i++) entries = what(); // warm up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    entries = what();
    times.push(performance.now() - started);
  }
  return { ms: summary(times), entries };
}

export async function run(): Promise<{ rows: Row[] }> {
  log(`transcript parsing bench on ${machineLine()}`);
  const rows: Row[] = [];
  for (const format of [...FORMATS, 'plain' as const]) {
    const output = format === 'plain' ? Array.from({ length: ENTRIES }, (_, i) => `line ${i}: ${'x'.repeat(60)}\n`).join('') : outputOf(format, ENTRIES);
    const bytes = Buffer.byteLength(output);
    const whole = time(() => parseTranscript(format, output).length);
    const chunked = time(() => {
      const parser = transcriptParser(format);
      let n = 0;
      for (let at = 0; at < output.length; at += CHUNK) n += parser.write(output.slice(at, at + CHUNK)).length;
      return n + parser.end().length;
    });
    const mib = bytes / 1024 / 1024;
    rows.push({
      name: `${format}: ${whole.entries} entries from ${round(mib, 2)} MiB of output`,
      value: `whole: p50 ${round(whole.ms.p50, 1)} ms (${round(mib / (whole.ms.p50 / 1000), 0)} MiB/s); 64 KiB chunks: p50 ${round(chunked.ms.p50, 1)} ms, max ${round(chunked.ms.max, 1)} ms (n=${RUNS})`,
    });
  }
  return { rows };
}

runIfMain(import.meta.url, 'Transcripts: parsing 5,000 entries', run);
