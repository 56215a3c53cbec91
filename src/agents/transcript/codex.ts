/**
 * Codex `exec --json` (docs/transcripts.md "Codex"): `item.started` / `item.completed` events whose
 * `item` is an `agent_message`, `reasoning`, `command_execution` (its `command` as Codex runs it,
 * `/bin/bash -lc '<command>'`, its `aggregated_output` and `exit_code`), `file_change` (the paths
 * and kinds of change, not the content), `mcp_tool_call`, `web_search`, `todo_list` or `error`;
 * `error` and `turn.failed` say why a turn failed (the same message twice: said once).
 * `thread.started` gives the session; `turn.started` and `turn.completed` (usage) are bookkeeping.
 */
import { otherEvent } from './json-lines.ts';
import { describeCall, outputText, readableError, record, str, type JsonObject } from './values.ts';
import type { EntryWriter } from './writer.ts';
import type { FileEdit } from './types.ts';

/** One shell word, unquoted: '…' literally, "…" with \" \\ \$ \` escapes, bare characters with \x. */
function unquoteWord(word: string): string | null {
  let out = '';
  for (let i = 0; i < word.length; ) {
    const c = word[i];
    if (c === "'") {
      const close = word.indexOf("'", i + 1);
      if (close === -1) return null;
      out += word.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      i++;
      while (i < word.length && word[i] !== '"') {
        if (word[i] === '\\' && i + 1 < word.length && '"\\$`'.includes(word[i + 1])) i++;
        out += word[i++];
      }
      if (i >= word.length) return null;
      i++;
    } else if (c === '\\' && i + 1 < word.length) {
      out += word[i + 1];
      i += 2;
    } else if (/\s/.test(c)) return null;
    else out += word[i++];
  }
  return out;
}

/** The command the model asked for, out of Codex's `/bin/bash -lc '<command>'` (as it is, when it has another shape). */
export function codexCommand(command: string): string {
  const wrapped = /^(?:\/\S*\/)?(?:ba|z)?sh -l?c (.+)$/s.exec(command);
  return (wrapped && unquoteWord(wrapped[1])) ?? command;
}

const CHANGES: Record<string, FileEdit['change']> = { add: 'add', delete: 'delete', update: 'update' };

function fileChanges(item: JsonObject): FileEdit[] {
  return (Array.isArray(item.changes) ? item.changes.map(record) : []).map((change) => ({
    path: str(change.path) ?? '',
    change: CHANGES[str(record(change.kind).type) ?? str(change.kind) ?? ''] ?? 'update',
    old_text: null,
    new_text: null,
  }));
}

/** The tool call an item is, or null for items that are not calls. */
function callOf(item: JsonObject) {
  switch (item.type) {
    case 'command_execution':
      return describeCall('shell', { command: item.command }, { command: codexCommand(str(item.command) ?? '') });
    case 'file_change':
      return describeCall('apply_patch', { changes: item.changes }, { edits: fileChanges(item) });
    case 'mcp_tool_call':
      return describeCall(`${str(item.server) ?? 'mcp'}.${str(item.tool) ?? 'tool'}`, item.arguments ?? null);
    case 'web_search':
      return describeCall('web_search', { query: item.query });
    default:
      return null;
  }
}

function result(item: JsonObject): { output: string; isError: boolean } {
  const exitCode = typeof item.exit_code === 'number' ? item.exit_code : null;
  const failed = item.status === 'failed' || (exitCode !== null && exitCode !== 0) || (item.error !== undefined && item.error !== null);
  const error = str(record(item.error).message);
  return { output: error ?? outputText(item.aggregated_output ?? item.result ?? ''), isError: failed };
}

function plan(item: JsonObject): string {
  return (Array.isArray(item.items) ? item.items.map(record) : []).map((step) => `${step.completed === true ? '[x]' : '[ ]'} ${str(step.text) ?? ''}`).join('\n');
}

function itemEvent(event: JsonObject, writer: EntryWriter): void {
  const item = record(event.item);
  const id = str(item.id);
  const call = callOf(item);
  if (call) {
    if (event.type === 'item.started' || (id !== null && !writer.hasCall(id))) writer.call(id, call);
    if (event.type === 'item.completed') {
      const { output, isError } = result(item);
      writer.result(id, output, isError, call.name);
    }
    return;
  }
  if (event.type !== 'item.completed') return;
  switch (item.type) {
    case 'agent_message':
      return writer.text(str(item.text) ?? '');
    case 'reasoning':
      return writer.status(str(item.text) ?? '');
    case 'todo_list':
      return writer.status(plan(item));
    case 'error':
      return writer.error(readableError(str(item.message) ?? 'error'));
    default:
      return otherEvent(item, writer);
  }
}

export function codexEvent(event: JsonObject, writer: EntryWriter): void {
  switch (event.type) {
    case 'thread.started':
      return writer.status('Session started');
    case 'turn.started':
    case 'turn.completed':
      return;
    case 'item.started':
    case 'item.completed':
      return itemEvent(event, writer);
    case 'item.updated':
      // A plan's progress, a command's output so far: the completed item says it whole.
      return;
    case 'turn.failed':
      return writer.error(readableError(str(record(event.error).message) ?? 'the turn failed'));
    case 'error':
      return writer.error(readableError(str(event.message) ?? 'error'));
    default:
      return otherEvent(event, writer);
  }
}
