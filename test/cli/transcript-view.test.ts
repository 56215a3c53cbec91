/**
 * The terminal view of a transcript (src/cli/client/transcript-view.ts), on entries the parsers
 * produce: long command output folded around a count, other tools' output cut shorter, an edit as
 * its changed lines, a long run of status lines counted, colours only of its own, and nothing an
 * agent wrote able to reach the terminal as a control sequence. (With a real server and pods:
 * transcripts.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { parseTranscript } from '../../src/agents/transcript/index.ts';
import { TranscriptView } from '../../src/cli/client/transcript-view.ts';
import { stripTerminalControls as stripControls } from '../../src/cli/client/terminal.ts';

const events = (...list: unknown[]) => list.map((e) => JSON.stringify(e)).join('\n') + '\n';
const call = (id: string, name: string, input: unknown) => ({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name, input }] } });
const result = (id: string, content: string, isError = false) => ({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] } });

function render(output: string, color = false): string {
  let shown = '';
  const view = new TranscriptView({ write: (text: string) => (shown += text) }, color);
  view.show(parseTranscript('claude-code', output));
  view.flush();
  return shown;
}

describe('the transcript view', () => {
  it('a long command output: its first and last lines around a count; other tools: the first lines', () => {
    const long = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`).join('\n');
    const shown = render(events(call('a', 'Bash', { command: 'seq 30' }), result('a', long), call('b', 'Read', { file_path: 'big.txt' }), result('b', long)));
    expect(shown).toBe(
      [
        '$ seq 30',
        ...[1, 2, 3, 4].map((n) => `  │ row ${n}`),
        '  … 21 more lines',
        ...[26, 27, 28, 29, 30].map((n) => `  │ row ${n}`),
        '→ Read big.txt',
        '  │ row 1',
        '  │ row 2',
        '  … 28 more lines',
        '',
      ].join('\n'),
    );
  });

  it('an edit: its file with the lines added and removed, and the changed lines; its result only when it failed', () => {
    const before = 'line 1\nline 2\nline 3\n';
    const after = 'line 1\nline two\nline 3\n';
    const shown = render(
      events(
        call('e', 'Edit', { file_path: 'notes.md', old_string: before, new_string: after }),
        result('e', 'The file notes.md has been updated.'),
        call('f', 'Edit', { file_path: 'gone.md', old_string: 'x', new_string: 'y' }),
        result('f', 'File has not been read yet.', true),
      ),
    );
    expect(shown).toBe(['✎ Edit notes.md', '    notes.md +1 -1', '    - line 2', '    + line two', '✎ Edit gone.md', '    gone.md +1 -1', '    - x', '    + y', '  ✗ File has not been read yet.', ''].join('\n'));
  });

  it('a run of status lines (a stack trace on stderr) shows its first lines and counts the rest; one left over is shown', () => {
    const trace = Array.from({ length: 12 }, (_, i) => `    at frame${i} (file.js:${i})`).join('\n');
    const shown = render(`Error: boom\n${trace}\n${events({ type: 'result', subtype: 'success', num_turns: 1 })}`);
    const lines = shown.trimEnd().split('\n');
    expect(lines.slice(0, 8)).toEqual(['· Error: boom', ...Array.from({ length: 7 }, (_, i) => `·     at frame${i} (file.js:${i})`)]);
    expect(lines.slice(8)).toEqual(['· … 6 more lines']);
    expect(render(`${Array.from({ length: 9 }, (_, i) => `note ${i}`).join('\n')}\n`).trimEnd().split('\n').at(-1)).toBe('· note 8');
  });

  it('colours are the view’s own: an agent’s escape sequences are stripped everywhere (text, commands, output, paths, diffs)', () => {
    const evil = '\x1b]0;title\x07\x1b[2J\x1b[1A\x1bc\x9b31m\x07\x08\r';
    const shown = render(
      events(
        { type: 'assistant', message: { content: [{ type: 'text', text: `hello${evil} world` }] } },
        call('a', 'Bash', { command: `ls${evil}` }),
        result('a', `out${evil}put`, true),
        call('w', 'Write', { file_path: `x${evil}.txt`, content: `new${evil}line` }),
      ),
      true,
    );
    // eslint-disable-next-line no-control-regex
    const own = /\x1b\[(?:0|1|2|31|32|36)m/g;
    expect(shown.replace(own, '')).toBe(['hello world', '$ ls', '  ✗ output', '✎ Write x.txt', '    x.txt +1 -0', '    + newline', ''].join('\n'));
    // eslint-disable-next-line no-control-regex
    expect(shown.replace(own, '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(shown).toContain('\x1b[31m  ✗ output\x1b[0m');
    expect(stripControls('tab\tand\nnewline stay')).toBe('tab\tand\nnewline stay');
    // A title left open ends at its line: the next line is still shown.
    expect(stripControls('one\x1b]0;open title\ntwo')).toBe('one\ntwo');
    expect(stripControls('a\x90dcs string\x9cb')).toBe('ab');
  });
});
