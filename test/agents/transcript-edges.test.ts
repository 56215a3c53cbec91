/**
 * The transcript parsers (src/agents/transcript) at their edges: seqs as byte offsets, lines split
 * anywhere, lines too long to read, lines that are not complete JSON, CLI noise and Drover's own
 * notes, unknown events, streamed text, the file tools' edits and `apply_patch` patches, Codex's
 * command wrapping, and that the parsers bundle for a browser (the dashboard will use them).
 */
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_CHARS, changedLines, parseTranscript, patchEdits, transcriptFormat, transcriptParser, type TranscriptFormat } from '../../src/agents/transcript/index.ts';
import { codexCommand } from '../../src/agents/transcript/codex.ts';

const lines = (...events: unknown[]) => events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n') + '\n';
const kinds = (format: TranscriptFormat, output: string) => parseTranscript(format, output).map((e) => [e.kind, e.text]);

describe('lines and seqs', () => {
  it('seq is the byte offset of the line an entry comes from (UTF-8), plus its place in the line', () => {
    const output = 'héllo wörld\n\nemoji 😀 here\r\nplain\n';
    const entries = parseTranscript('plain', output);
    expect(entries.map((e) => e.text)).toEqual(['héllo wörld', 'emoji 😀 here', 'plain']);
    const offsets = ['héllo', 'emoji', 'plain'].map((word) => Buffer.from(output).indexOf(Buffer.from(word)));
    expect(entries.map((e) => e.seq)).toEqual(offsets);
    // Two entries of one line: consecutive seqs.
    const claude = parseTranscript('claude-code', lines({ type: 'assistant', message: { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] } }), { offset: 1000 });
    expect(claude.map((e) => e.seq)).toEqual([1000, 1001]);
  });

  it('a line longer than MAX_LINE_CHARS is skipped with a status entry, and the lines after it keep their offsets', () => {
    const huge = `{"type":"assistant","x":"${'x'.repeat(MAX_LINE_CHARS)}"}`;
    const after = { type: 'assistant', message: { content: [{ type: 'text', text: 'still here' }] } };
    const output = lines(huge, after);
    const parser = transcriptParser('claude-code');
    const entries = [...parser.write(output.slice(0, 5_000_000)), ...parser.write(output.slice(5_000_000)), ...parser.end()];
    expect(entries.map((e) => e.kind)).toEqual(['status', 'text']);
    expect(entries[0].text).toBe(`(an output line of ${huge.length} characters was too long to read and was skipped)`);
    expect(entries[1]).toMatchObject({ seq: huge.length + 1, text: 'still here' });
  });

  it('a line that starts like JSON but is not complete is counted, never shown; stderr text is a status entry', () => {
    const cut = '{"type":"assistant","message":{"content":[{"type":"te';
    const output = lines(cut, 'Warning: something on stderr', '[drover] network: refused 10.0.0.1:5432 (not allowed)', { type: 'result', subtype: 'success', num_turns: 1 });
    expect(kinds('claude-code', output)).toEqual([
      ['status', `(an output line of ${cut.length} characters that is not complete JSON was skipped)`],
      ['status', 'Warning: something on stderr'],
      ['status', '[drover] network: refused 10.0.0.1:5432 (not allowed)'],
      ['status', 'Finished (1 turn)'],
    ]);
  });

  it('plain: a line per text entry, as a terminal shows it (after its last carriage return); Drover notes as status; a last line without newline at the end', () => {
    const output = 'building\rprogress 10%\rprogress 100%\n\n   \nline two\r\n[drover] 120 bytes of this pod\'s output were dropped\nno newline';
    const parser = transcriptParser('plain');
    const live = parser.write(output);
    expect(live.map((e) => e.text)).toEqual(['progress 100%', 'line two', "[drover] 120 bytes of this pod's output were dropped"]);
    expect(live.map((e) => e.kind)).toEqual(['text', 'text', 'status']);
    expect(parser.end()).toEqual([{ seq: Buffer.byteLength(output) - 'no newline'.length, kind: 'text', text: 'no newline', tool: null }]);
  });

  it('midLine: the first line of plain output is a piece of a line, dropped', () => {
    expect(parseTranscript('plain', 'tail of a line\nnext\n', { offset: 50, midLine: true })).toEqual([{ seq: 65, kind: 'text', text: 'next', tool: null }]);
  });

  it('transcriptFormat: the four JSON-printing built-in agents have their own; shell, aider and custom agents are plain', () => {
    expect(['claude-code', 'codex', 'gemini-cli', 'opencode', 'shell', 'aider', 'my-agent', 'plain'].map(transcriptFormat)).toEqual([
      'claude-code',
      'codex',
      'gemini-cli',
      'opencode',
      'plain',
      'plain',
      'plain',
      'plain',
    ]);
  });
});

describe('events', () => {
  it('unknown event types: a status when they carry a message, nothing when they are bookkeeping', () => {
    for (const format of ['claude-code', 'codex', 'gemini-cli', 'opencode'] as const) {
      const output = lines({ type: 'mystery_event', message: 'a new kind of notice' }, { type: 'mystery_tick', count: 3 }, { type: 'mystery_error', error: { message: 'went wrong' } });
      expect(kinds(format, output), format).toEqual([
        ['status', 'a new kind of notice'],
        ['status', 'went wrong'],
      ]);
    }
  });

  it('gemini-cli: streamed pieces of text make one entry, held until another event (or the end) says it is complete', () => {
    const parser = transcriptParser('gemini-cli');
    const pieces = ['Hel', 'lo, ', 'world.'].map((content) => ({ type: 'message', role: 'assistant', content, delta: true }));
    expect(parser.write(lines(...pieces))).toEqual([]);
    const next = parser.write(lines({ type: 'tool_use', tool_name: 'read_file', tool_id: 't1', parameters: { absolute_path: '/w/a.txt' } }));
    expect(next.map((e) => [e.seq, e.kind, e.text])).toEqual([
      [0, 'text', 'Hello, world.'],
      [lines(...pieces).length, 'tool_call', 'read_file /w/a.txt'],
    ]);
    parser.write(lines({ type: 'message', role: 'assistant', content: 'Done', delta: true }));
    expect(parser.end().map((e) => e.text)).toEqual(['Done']);
  });

  it('claude-code: thinking, an Edit and a MultiEdit with their changes, a retried API call, a stop at max turns, tool output in blocks', () => {
    const output = lines(
      { type: 'system', subtype: 'api_retry', attempt: 2, max_retries: 10, error_status: 529, error: 'overloaded' },
      { type: 'assistant', message: { content: [{ type: 'thinking', thinking: 'Let me look.' }, { type: 'tool_use', id: 'e1', name: 'Edit', input: { file_path: 'src/a.ts', old_string: 'let a = 1;', new_string: 'const a = 1;' } }] } },
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'e1', content: [{ type: 'text', text: 'The file src/a.ts has been updated.' }, { type: 'image' }] }] } },
      { type: 'assistant', message: { content: [{ type: 'tool_use', id: 'm1', name: 'MultiEdit', input: { file_path: 'b.md', edits: [{ old_string: 'x', new_string: 'y' }, { old_string: 'p', new_string: 'q' }] } }] } },
      { type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 3 },
    );
    const entries = parseTranscript('claude-code', output);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['status', 'Model API call failed (HTTP 529, overloaded); retrying (attempt 2 of 10)'],
      ['status', 'Let me look.'],
      ['tool_call', 'Edit src/a.ts'],
      ['tool_result', 'The file src/a.ts has been updated.\n[image]'],
      ['tool_call', 'MultiEdit b.md'],
      ['error', 'Stopped: the maximum number of turns was reached'],
    ]);
    expect(entries[2].tool!.edits).toEqual([{ path: 'src/a.ts', change: 'update', old_text: 'let a = 1;', new_text: 'const a = 1;' }]);
    expect(entries[4].tool!.edits).toEqual([
      { path: 'b.md', change: 'update', old_text: 'x', new_text: 'y' },
      { path: 'b.md', change: 'update', old_text: 'p', new_text: 'q' },
    ]);
  });

  it('codex: an item completed without being started is a call and its result; file changes, MCP calls, plans, reasoning, readable errors', () => {
    const output = lines(
      { type: 'item.completed', item: { id: 'i1', type: 'command_execution', command: 'bash -lc "echo \\"hi there\\" && ls \'a b\'"', aggregated_output: 'hi there\n', exit_code: 0, status: 'completed' } },
      { type: 'item.completed', item: { id: 'i2', type: 'file_change', changes: [{ path: 'src/x.ts', kind: 'update' }, { path: 'old.txt', kind: 'delete' }], status: 'completed' } },
      { type: 'item.started', item: { id: 'i3', type: 'mcp_tool_call', server: 'drover', tool: 'channel_post', arguments: { content: 'hello' }, status: 'in_progress' } },
      { type: 'item.completed', item: { id: 'i3', type: 'mcp_tool_call', server: 'drover', tool: 'channel_post', arguments: { content: 'hello' }, error: { message: 'channel archived' }, status: 'failed' } },
      { type: 'item.completed', item: { id: 'i4', type: 'todo_list', items: [{ text: 'read', completed: true }, { text: 'write', completed: false }] } },
      { type: 'item.completed', item: { id: 'i5', type: 'reasoning', text: 'Thinking about it' } },
      { type: 'error', message: '{"error":{"message":"Rate limit reached","type":"rate_limit"}}' },
    );
    const entries = parseTranscript('codex', output);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['tool_call', `$ echo "hi there" && ls 'a b'`],
      ['tool_result', 'hi there\n'],
      ['tool_call', 'apply_patch src/x.ts, old.txt'],
      ['tool_result', ''],
      ['tool_call', 'drover.channel_post content=hello'],
      ['tool_result', 'channel archived'],
      ['status', '[x] read\n[ ] write'],
      ['status', 'Thinking about it'],
      ['error', 'Rate limit reached'],
    ]);
    expect(entries[1].tool!.call_seq).toBe(entries[0].seq);
    expect(entries[2].tool!.edits!.map((e) => e.change)).toEqual(['update', 'delete']);
    expect(entries[5].tool).toMatchObject({ is_error: true, call_seq: entries[4].seq, name: 'drover.channel_post' });
  });

  it("codex: the command inside Codex's shell wrapping, unquoted; other shapes as they are", () => {
    expect(codexCommand(`/bin/bash -lc "printf 'hello\\\\n' > notes.txt && cat notes.txt"`)).toBe("printf 'hello\\n' > notes.txt && cat notes.txt");
    expect(codexCommand(`/bin/bash -lc 'cat missing.txt'`)).toBe('cat missing.txt');
    // A double-quoted word, then a single-quoted one, as Codex writes a `!` (test/fixtures/transcripts/codex-*.out).
    expect(codexCommand(`/bin/bash -lc "cat > 'g.txt' <<'EOF'\nHello, Drover"'!\nEOF'`)).toBe(`cat > 'g.txt' <<'EOF'\nHello, Drover!\nEOF`);
    expect(codexCommand(`bash -lc "say \\"hi\\" \\$HOME"`)).toBe('say "hi" $HOME');
    expect(codexCommand('zsh -c ls')).toBe('ls');
    expect(codexCommand('python3 script.py')).toBe('python3 script.py');
    expect(codexCommand(`bash -lc 'unterminated`)).toBe(`bash -lc 'unterminated`);
  });

  it('opencode: an edit, a tool that failed, a call first seen running, OpenCode notes and errors', () => {
    const tool = (status: string, extra: Record<string, unknown>) => ({ type: 'tool_use', part: { type: 'tool', tool: 'edit', callID: 'c1', state: { status, input: { filePath: 'a.ts', oldString: 'a', newString: 'b' }, ...extra } } });
    const output = lines(
      tool('running', {}),
      tool('completed', { output: 'Edit applied.' }),
      { type: 'tool_use', part: { type: 'tool', tool: 'read', callID: 'c2', state: { status: 'error', input: { filePath: 'nope.ts' }, error: 'File not found: nope.ts' } } },
      { type: 'text', part: { type: 'text', synthetic: true, text: 'The conversation was compacted.' } },
      { type: 'error', error: { name: 'APIError', data: { message: 'overloaded' } } },
    );
    const entries = parseTranscript('opencode', output);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['tool_call', 'edit a.ts'],
      ['tool_result', 'Edit applied.'],
      ['tool_call', 'read nope.ts'],
      ['tool_result', 'File not found: nope.ts'],
      ['status', 'The conversation was compacted.'],
      ['error', 'overloaded'],
    ]);
    expect(entries[0].tool!.edits).toEqual([{ path: 'a.ts', change: 'update', old_text: 'a', new_text: 'b' }]);
    expect(entries[3].tool).toMatchObject({ is_error: true, call_seq: entries[2].seq });
  });

  it('gemini-cli: replace has its change; a failed tool, a warning and an error event', () => {
    const output = lines(
      { type: 'tool_use', tool_name: 'replace', tool_id: 'r1', parameters: { file_path: 'x.py', old_string: 'print 1', new_string: 'print(1)' } },
      { type: 'tool_result', tool_id: 'r1', status: 'error', error: { type: 'edit_no_match', message: 'could not find the text to replace' } },
      { type: 'error', severity: 'warning', message: 'loop detected' },
      { type: 'error', severity: 'error', message: 'quota exceeded' },
    );
    const entries = parseTranscript('gemini-cli', output);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['tool_call', 'replace x.py'],
      ['tool_result', 'could not find the text to replace'],
      ['status', 'loop detected'],
      ['error', 'quota exceeded'],
    ]);
    expect(entries[0].tool!.edits).toEqual([{ path: 'x.py', change: 'update', old_text: 'print 1', new_text: 'print(1)' }]);
    expect(entries[1].tool!.is_error).toBe(true);
  });
});

describe('apply_patch patches', () => {
  it('added, deleted, updated (a change per hunk) and moved files', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: notes/new.md',
      '+# New',
      '+',
      '+text',
      '*** Delete File: old.txt',
      '*** Update File: src/a.ts',
      '*** Move to: src/b.ts',
      '@@ function f',
      ' const x = 1;',
      '-return x;',
      '+return x + 1;',
      '@@',
      '-// old',
      '+// new',
      '*** End of File',
      '*** End Patch',
    ].join('\n');
    expect(patchEdits(patch)).toEqual([
      { path: 'notes/new.md', change: 'add', old_text: null, new_text: '# New\n\ntext' },
      { path: 'old.txt', change: 'delete', old_text: null, new_text: null },
      { path: 'src/b.ts', change: 'update', old_text: 'const x = 1;\nreturn x;', new_text: 'const x = 1;\nreturn x + 1;' },
      { path: 'src/b.ts', change: 'update', old_text: '// old', new_text: '// new' },
    ]);
    const entries = parseTranscript('claude-code', lines({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 'p', name: 'apply_patch', input: { patchText: patch } }] } }));
    expect(entries[0].text).toBe('apply_patch notes/new.md, old.txt, src/b.ts');
  });
});

it('changedLines: the lines an edit changes, without those the old and new text share at both ends', () => {
  expect(changedLines({ old_text: 'a\nb\nc\nd\n', new_text: 'a\nB\nc\nd\n' })).toEqual({ removed: ['b'], added: ['B'] });
  expect(changedLines({ old_text: null, new_text: 'one\ntwo\n' })).toEqual({ removed: [], added: ['one', 'two'] });
  expect(changedLines({ old_text: 'x\ny', new_text: 'x\ny\nz' })).toEqual({ removed: [], added: ['z'] });
  expect(changedLines({ old_text: 'same', new_text: 'same' })).toEqual({ removed: [], added: [] });
  expect(changedLines({ old_text: 'gone\n', new_text: null })).toEqual({ removed: ['gone'], added: [] });
});

it('the parsers bundle for a browser (no Node-only imports), so the dashboard can read transcripts itself', async () => {
  const result = await build({
    entryPoints: [path.join(import.meta.dirname, '..', '..', 'src', 'agents', 'transcript', 'index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  expect(result.errors).toEqual([]);
  expect(result.outputFiles[0].text).toContain('transcriptParser');
});
