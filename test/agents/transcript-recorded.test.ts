/**
 * The transcript parsers (src/agents/transcript) on what the pinned CLIs really printed, stdout and
 * stderr interleaved as a pod's output holds them (test/fixtures/transcripts/, recorded by
 * scripts/record-transcripts.ts against the model stand-ins). The scenarios:
 * - `work`: `printf 'hello\n' > notes.txt && cat notes.txt`, then greeting.txt written with the
 *   CLI's file tool, then `cat missing.txt` (fails), then a final text;
 * - `error`: `echo checking`, then the model API refuses the next request (HTTP 400).
 * Each is read whole, in chunks of every size, and from a cut inside it (the kept tail of a long
 * output): the same entries each time.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTranscript, transcriptParser, type TranscriptEntry, type TranscriptFormat } from '../../src/agents/transcript/index.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'transcripts');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const FORMATS = ['claude-code', 'codex', 'gemini-cli', 'opencode'] as const;
const REFUSAL = 'the model stand-in refuses this request (a scripted failure)';

/** Which CLIs say that `cat missing.txt` failed (Gemini CLI returns its output as a success). */
const REPORTS_FAILED_COMMAND: Record<(typeof FORMATS)[number], boolean> = { 'claude-code': true, codex: true, 'gemini-cli': false, opencode: true };

const calls = (entries: TranscriptEntry[]) => entries.filter((e) => e.kind === 'tool_call');
const resultOf = (entries: TranscriptEntry[], call: TranscriptEntry) => entries.find((e) => e.kind === 'tool_result' && e.tool?.call_seq === call.seq);

/** Every line of the output that is a JSON value: none may be shown as an entry's text. */
function jsonLines(output: string): Set<string> {
  const lines = output.split('\n').map((line) => line.trim());
  return new Set(
    lines.filter((line) => {
      try {
        JSON.parse(line);
        return line.startsWith('{') || line.startsWith('[');
      } catch {
        return false;
      }
    }),
  );
}

function expectNoRawJson(entries: TranscriptEntry[], output: string): void {
  const raw = jsonLines(output);
  for (const entry of entries) {
    expect(raw.has(entry.text.trim()), `entry ${entry.seq} shows a raw JSON line`).toBe(false);
    expect(entry.text.trim().startsWith('{"'), `entry ${entry.seq}: ${entry.text.slice(0, 80)}`).toBe(false);
  }
}

function expectIncreasingSeqs(entries: TranscriptEntry[]): void {
  for (let i = 1; i < entries.length; i++) expect(entries[i].seq).toBeGreaterThan(entries[i - 1].seq);
}

describe.each(FORMATS)('%s: recorded output', (format: TranscriptFormat & (typeof FORMATS)[number]) => {
  const work = fixture(`${format}-work.out`);
  const failed = fixture(`${format}-error.out`);

  it('work: the shell command, the file write, the failing command and the final text, in order, calls paired with their results', () => {
    const entries = parseTranscript(format, work);
    expectNoRawJson(entries, work);
    expectIncreasingSeqs(entries);
    const [printf, write, missing, ...more] = calls(entries);
    expect(more).toEqual([]);

    expect(printf.text).toBe("$ printf 'hello\\n' > notes.txt && cat notes.txt");
    expect(printf.tool).toMatchObject({ command: "printf 'hello\\n' > notes.txt && cat notes.txt", output: null, edits: null, call_seq: null });
    expect(printf.tool!.input).not.toBeNull();
    const hello = resultOf(entries, printf)!;
    expect(hello.tool).toMatchObject({ name: printf.tool!.name, is_error: false, command: printf.tool!.command, input: null });
    expect(hello.text.trim()).toBe('hello');
    expect(hello.tool!.output).toBe(hello.text);

    // Greeting.txt: Codex names the file and the kind of change; the others carry its content.
    expect(write.tool!.command).toBeNull();
    expect(write.tool!.edits).toHaveLength(1);
    const edit = write.tool!.edits![0];
    expect(edit.path.endsWith('greeting.txt')).toBe(true);
    expect(write.text).toContain('greeting.txt');
    if (format === 'codex') expect(edit).toMatchObject({ change: 'add', old_text: null, new_text: null });
    else expect(edit).toEqual({ path: 'greeting.txt', change: 'write', old_text: null, new_text: 'Hello, Drover!\nSecond line.\n' });
    expect(resultOf(entries, write)!.tool!.is_error).toBe(false);

    expect(missing.text).toBe('$ cat missing.txt');
    const notFound = resultOf(entries, missing)!;
    expect(notFound.text).toContain('missing.txt: No such file or directory');
    expect(notFound.tool!.is_error).toBe(REPORTS_FAILED_COMMAND[format]);

    const texts = entries.filter((e) => e.kind === 'text');
    expect(texts.map((e) => e.text)).toEqual(['Done: wrote greeting.txt; missing.txt does not exist.']);
    // In order: each call, then its result, and the final text after the last result.
    const order = [printf, hello, write, resultOf(entries, write)!, missing, notFound, texts[0]].map((e) => entries.indexOf(e));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(entries.filter((e) => e.kind === 'error')).toEqual([]);
  });

  it('error: the command, its result, then the model API refusal as one error entry', () => {
    const entries = parseTranscript(format, failed);
    expectNoRawJson(entries, failed);
    expectIncreasingSeqs(entries);
    const [echo] = calls(entries);
    expect(echo.text).toBe('$ echo checking');
    const checking = resultOf(entries, echo)!;
    expect(checking.text.trim()).toBe('checking');
    const errors = entries.filter((e) => e.kind === 'error' && e.text.includes(REFUSAL));
    expect(errors).toHaveLength(1);
    expect(entries.indexOf(errors[0])).toBeGreaterThan(entries.indexOf(checking));
    expect(errors[0].tool).toBeNull();
  });

  it('the same entries whatever the chunks the output comes in (lines and characters split anywhere)', () => {
    const whole = parseTranscript(format, work);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 60 }), (sizes) => {
        const parser = transcriptParser(format);
        const entries: TranscriptEntry[] = [];
        let at = 0;
        for (let i = 0; at < work.length; i++) {
          const size = sizes[i % sizes.length];
          entries.push(...parser.write(work.slice(at, at + size)));
          at += size;
        }
        entries.push(...parser.end());
        expect(entries).toEqual(whole);
      }),
      { numRuns: 60 },
    );
    const oneByOne = transcriptParser(format);
    const entries = [...work].flatMap((c) => oneByOne.write(c));
    expect([...entries, ...oneByOne.end()]).toEqual(whole);
  });

  it('entries come as soon as their line is complete: a live reader sees the call before its result exists', () => {
    const parser = transcriptParser(format);
    const cut = work.indexOf('\n', work.indexOf('printf')) + 1;
    const early = parser.write(work.slice(0, cut));
    // OpenCode prints a tool call once it is done, call and result in one event.
    const last = early.at(format === 'opencode' ? -2 : -1);
    expect(last?.kind).toBe('tool_call');
    expect(last?.tool?.command).toContain('printf');
    expect(early.some((e) => e.kind === 'tool_result')).toBe(format === 'opencode');
  });

  it('read from a cut inside a line (the kept tail of a long output): the entries of the lines after it, with the same seqs', () => {
    const whole = parseTranscript(format, work);
    const bytes = Buffer.from(work);
    const lineStarts = [0, ...[...bytes.entries()].filter(([, byte]) => byte === 10).map(([at]) => at + 1)];
    const lineOf = (seq: number) => lineStarts.filter((start) => start <= seq).at(-1)!;
    /**
     * Entries by the line they come from, results without what only their call tells (a call before
     * the cut is not in the tail; Codex's completed item then gives the call again, on its own line).
     */
    const comparable = (entries: TranscriptEntry[], first: number) =>
      entries.map((e) => ({ line: lineOf(e.seq), kind: e.kind, text: e.text, paired: e.kind === 'tool_result' && e.tool!.call_seq !== null && e.tool!.call_seq >= first && lineOf(e.tool!.call_seq) !== lineOf(e.seq) }));
    let cuts = 0;
    for (let cut = 1; cut < bytes.length - 1; cut += 37) {
      // As the server keeps a tail: from a character's first byte.
      let start = cut;
      while ((bytes[start] & 0xc0) === 0x80) start++;
      if (bytes[start - 1] === 10 || bytes[start] === 10) continue;
      cuts++;
      const entries = parseTranscript(format, bytes.subarray(start).toString(), { offset: start, midLine: true });
      const next = bytes.indexOf(10, start) + 1;
      const expected = comparable(whole.filter((e) => e.seq >= next), next);
      const callLines = new Set(expected.filter((e) => e.kind === 'tool_call').map((e) => e.line));
      const received = comparable(entries, next).filter((e) => e.kind !== 'tool_call' || callLines.has(e.line));
      expect(received).toEqual(expected);
      expectNoRawJson(entries, work);
    }
    expect(cuts).toBeGreaterThan(20);
  });

  it('read from a cut at a line start: a whole event on the first line is kept', () => {
    const whole = parseTranscript(format, work);
    const bytes = Buffer.from(work);
    const start = bytes.indexOf(Buffer.from('\n{')) + 1;
    const entries = parseTranscript(format, bytes.subarray(start).toString(), { offset: start, midLine: true });
    expect(entries.map((e) => e.seq)).toEqual(whole.filter((e) => e.seq >= start).map((e) => e.seq));
  });
});
