/**
 * Aider has no machine-readable output: its pods' transcript is plain lines (docs/transcripts.md,
 * docs/cli.md "Pods"). On output shaped like a recorded `aider --message … --yes-always`
 * run (banner, the model's reply, a SEARCH/REPLACE block, the token report, the commit, colours
 * and a progress line rewritten with carriage returns, a Drover note): every line is shown as a
 * line, in order, with nothing taken for JSON and no control sequence reaching the terminal; on a
 * terminal `pods logs` shows an Aider pod's output as printed, and `--pretty` as those lines.
 */
import { describe, expect, it } from 'vitest';
import { parseTranscript, transcriptFormat } from '../../src/agents/transcript/index.ts';
import { COMMANDS } from '../../src/cli/client/main.ts';
import { parseCommand, type CommandContext } from '../../src/cli/client/framework.ts';
import { TranscriptView, transcriptWanted } from '../../src/cli/client/transcript-view.ts';

const ESC = '\u001b';
const AIDER_OUTPUT = [
  `${ESC}[33mAider v0.86.1${ESC}[0m`,
  'Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output',
  'Git repo: .git with 3 files',
  'Repo-map: using 4096 tokens, auto refresh',
  '',
  "I'll add a health check to app.py.",
  '',
  'app.py',
  '```python',
  '<<<<<<< SEARCH',
  'def main():',
  '=======',
  'def health():',
  '    return {"status": "ok"}',
  '',
  'def main():',
  '>>>>>>> REPLACE',
  '```',
  '',
  '{"type":"assistant","message":"this is text aider printed, not an event"}',
  'Tokens: 2.1k sent, 120 received. Cost: $0.0081 message, $0.0081 session.',
  'Applying edits… 10%\rApplying edits… 100%',
  `${ESC}]0;aider${ESC}\\Applied edit to app.py`,
  'Commit 1a2b3c4 feat: Add health check endpoint',
  '[drover] network: refused api.example.com:443 (not allowed)',
  '',
].join('\n');

const VISIBLE_LINES = [
  'Aider v0.86.1',
  'Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output',
  'Git repo: .git with 3 files',
  'Repo-map: using 4096 tokens, auto refresh',
  "I'll add a health check to app.py.",
  'app.py',
  '```python',
  '<<<<<<< SEARCH',
  'def main():',
  '=======',
  'def health():',
  '    return {"status": "ok"}',
  'def main():',
  '>>>>>>> REPLACE',
  '```',
  '{"type":"assistant","message":"this is text aider printed, not an event"}',
  'Tokens: 2.1k sent, 120 received. Cost: $0.0081 message, $0.0081 session.',
  'Applying edits… 100%',
  'Applied edit to app.py',
  'Commit 1a2b3c4 feat: Add health check endpoint',
];

function context(isTTY: boolean): CommandContext {
  const out = { isTTY, write: () => true };
  return { client: () => { throw new Error('no client in this test'); }, json: false, raw: false, out, err: out, env: {}, signal: new AbortController().signal, readStdin: async () => '' };
}

describe('Aider pods: plain lines', () => {
  it('the transcript is one text entry per line, in order; the Drover note a status; no line read as JSON', () => {
    expect(transcriptFormat('aider')).toBe('plain');
    const entries = parseTranscript(transcriptFormat('aider'), AIDER_OUTPUT);
    expect(entries.every((e) => e.tool === null)).toBe(true);
    expect(entries.filter((e) => e.kind === 'status').map((e) => e.text)).toEqual(['[drover] network: refused api.example.com:443 (not allowed)']);
    const texts = entries.filter((e) => e.kind === 'text');
    expect(texts).toHaveLength(VISIBLE_LINES.length);
    expect(entries.map((e) => e.kind)).toEqual([...VISIBLE_LINES.map(() => 'text'), 'status']);
    // In order of the output, each seq the byte offset of its line.
    for (let i = 1; i < entries.length; i++) expect(entries[i].seq).toBeGreaterThan(entries[i - 1].seq);
    expect(texts[15].text).toBe('{"type":"assistant","message":"this is text aider printed, not an event"}');
  });

  it('the terminal view prints those lines as they read, without control sequences', () => {
    let shown = '';
    const view = new TranscriptView({ write: (text: string) => (shown += text) }, false);
    view.show(parseTranscript('plain', AIDER_OUTPUT));
    view.flush();
    for (const control of [ESC, '\u009b', '\r']) expect(shown).not.toContain(control);
    const lines = shown.trimEnd().split('\n');
    expect(lines.filter((l) => !l.startsWith('·'))).toEqual(VISIBLE_LINES);
    expect(lines.at(-1)).toContain('[drover] network: refused api.example.com:443');
  });

  it('pods logs on a terminal: an Aider pod as printed; --pretty (or --format plain) as plain lines; claude-code as its transcript', async () => {
    const logs = COMMANDS.find((c) => c.name === 'pods logs')!;
    const wanted = (agent: string, argv: string[], tty = true) => transcriptWanted(context(tty), parseCommand(logs, ['p-1', ...argv]), async () => agent);
    expect(await wanted('aider', [])).toBeNull();
    expect(await wanted('aider', ['--pretty'])).toBe('plain');
    expect(await wanted('aider', ['--pretty'], false)).toBe('plain');
    expect(await wanted('claude-code', [])).toBe('claude-code');
    expect(await wanted('claude-code', [], false)).toBeNull();
    expect(await wanted('claude-code', ['--raw'])).toBeNull();
  });
});
