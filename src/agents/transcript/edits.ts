/**
 * What a file tool call changes, from its arguments, for the agents' file tools (docs/transcripts.md
 * "File edits"): Claude Code `Write`/`Edit`/`MultiEdit`, Gemini CLI `write_file`/`replace`,
 * OpenCode `write`/`edit`/`patch`, and the `apply_patch` format Codex (and OpenCode for GPT models)
 * writes patches in. Codex's own `file_change` events name files only (codex.ts).
 */
import type { FileEdit } from './types.ts';

const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function pathOf(input: Record<string, unknown>): string | null {
  return text(input.file_path) ?? text(input.filePath) ?? text(input.absolute_path) ?? text(input.path);
}

function replacement(path: string, edit: Record<string, unknown>): FileEdit | null {
  const oldText = text(edit.old_string) ?? text(edit.oldString);
  const newText = text(edit.new_string) ?? text(edit.newString);
  return oldText === null && newText === null ? null : { path, change: 'update', old_text: oldText, new_text: newText };
}

/**
 * The files an `apply_patch` patch changes: `*** Add File:` (its `+` lines), `*** Delete File:`,
 * `*** Update File:` (one edit per `@@` hunk: context and `-` lines before, context and `+` lines
 * after), `*** Move to:` naming the new path.
 */
export function patchEdits(patch: string): FileEdit[] {
  const edits: FileEdit[] = [];
  let current: FileEdit | null = null;
  let before: string[] = [];
  let after: string[] = [];
  const closeHunk = () => {
    if (current?.change === 'update' && (before.length > 0 || after.length > 0)) {
      edits.push({ ...current, old_text: before.join('\n'), new_text: after.join('\n') });
    } else if (current?.change === 'add') edits.push({ ...current, new_text: after.join('\n') });
    before = [];
    after = [];
  };
  const open = (path: string, change: FileEdit['change']) => {
    closeHunk();
    current = { path, change, old_text: null, new_text: null };
    if (change === 'delete') edits.push(current);
  };
  for (const line of patch.split('\n')) {
    const header = /^\*\*\* (Add|Delete|Update) File: (.+)$/.exec(line);
    if (header) {
      open(header[2].trim(), header[1] === 'Add' ? 'add' : header[1] === 'Delete' ? 'delete' : 'update');
      continue;
    }
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    const file = current as FileEdit | null;
    if (move && file) file.path = move[1].trim();
    else if (line.startsWith('@@')) closeHunk();
    else if (line.startsWith('***') || !file) continue;
    else if (line.startsWith('+')) after.push(line.slice(1));
    else if (line.startsWith('-')) before.push(line.slice(1));
    else if (line.startsWith(' ')) {
      before.push(line.slice(1));
      after.push(line.slice(1));
    }
  }
  closeHunk();
  return edits;
}

/** The changes a tool call makes, or null when the tool is not one of the file tools above. */
export function fileEdits(name: string, rawInput: unknown): FileEdit[] | null {
  const input = record(rawInput);
  const path = pathOf(input);
  switch (name.toLowerCase()) {
    case 'write':
    case 'write_file':
      return path === null ? null : [{ path, change: 'write', old_text: null, new_text: text(input.content) }];
    case 'edit':
    case 'replace': {
      const edit = path === null ? null : replacement(path, input);
      return edit ? [edit] : null;
    }
    case 'multiedit': {
      if (path === null || !Array.isArray(input.edits)) return null;
      return input.edits.map((e) => replacement(path, record(e))).filter((e): e is FileEdit => e !== null);
    }
    case 'apply_patch':
    case 'patch': {
      const patch = typeof rawInput === 'string' ? rawInput : (text(input.patchText) ?? text(input.patch) ?? text(input.input));
      return patch === null ? null : patchEdits(patch);
    }
    default:
      return null;
  }
}
