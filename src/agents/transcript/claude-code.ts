/**
 * Claude Code `-p --output-format stream-json --verbose` (docs/transcripts.md "Claude Code"): one
 * event a line. `assistant` messages hold text, thinking and `tool_use` blocks; `user` messages hold
 * the `tool_result` blocks (paired by `tool_use_id`); `system` events say the session started, an
 * API call is retried, the conversation is compacted; `result` ends the run. An API error comes as
 * an assistant message marked `is_api_error_message` and again as the `result`: said once.
 */
import { otherEvent } from './json-lines.ts';
import { describeCall, num, outputText, record, str, type JsonObject } from './values.ts';
import type { EntryWriter } from './writer.ts';

function assistant(event: JsonObject, writer: EntryWriter): void {
  const message = record(event.message);
  const failed = event.is_api_error_message === true || typeof event.error === 'string';
  for (const block of Array.isArray(message.content) ? message.content.map(record) : []) {
    if (block.type === 'text') {
      const text = str(block.text) ?? '';
      if (failed) writer.error(text);
      else writer.text(text);
    } else if (block.type === 'thinking') writer.status(str(block.thinking) ?? '');
    else if (block.type === 'tool_use' || block.type === 'server_tool_use' || block.type === 'mcp_tool_use') {
      writer.call(str(block.id), describeCall(str(block.name) ?? 'tool', block.input ?? null));
    }
  }
}

function user(event: JsonObject, writer: EntryWriter): void {
  const content = record(event.message).content;
  if (typeof content === 'string') return writer.status(content);
  for (const block of Array.isArray(content) ? content.map(record) : []) {
    if (block.type === 'tool_result') writer.result(str(block.tool_use_id), outputText(block.content), block.is_error === true);
    else if (block.type === 'text') writer.status(str(block.text) ?? '');
  }
}

function system(event: JsonObject, writer: EntryWriter): void {
  switch (event.subtype) {
    case 'init': {
      const model = str(event.model);
      return writer.status(`Session started${model ? ` (model ${model})` : ''}`);
    }
    case 'api_retry': {
      const attempt = num(event.attempt);
      const max = num(event.max_retries);
      const status = num(event.error_status);
      const why = [status === null ? null : `HTTP ${status}`, str(event.error)].filter(Boolean).join(', ');
      return writer.status(`Model API call failed${why ? ` (${why})` : ''}; retrying${attempt === null ? '' : ` (attempt ${attempt}${max === null ? '' : ` of ${max}`})`}`);
    }
    case 'status':
      if (event.status === 'compacting') writer.status('Compacting the conversation');
      return;
    case 'compact_boundary':
      return writer.status('Conversation compacted');
    default:
      return otherEvent(event, writer);
  }
}

const STOPS: Record<string, string> = {
  error_max_turns: 'Stopped: the maximum number of turns was reached',
  error_during_execution: 'Stopped by an error during execution',
  error_max_budget_usd: 'Stopped: the budget was reached',
};

function result(event: JsonObject, writer: EntryWriter): void {
  const subtype = str(event.subtype) ?? '';
  if (event.is_error === true || subtype.startsWith('error')) {
    return writer.error(str(event.result) ?? STOPS[subtype] ?? `Stopped (${subtype || 'error'})`);
  }
  const turns = num(event.num_turns);
  const cost = num(event.total_cost_usd);
  const figures = [turns === null ? null : `${turns} turn${turns === 1 ? '' : 's'}`, cost === null ? null : `$${cost.toFixed(4)}`].filter(Boolean);
  writer.status(`Finished${figures.length > 0 ? ` (${figures.join(', ')})` : ''}`);
}

export function claudeCodeEvent(event: JsonObject, writer: EntryWriter): void {
  switch (event.type) {
    case 'assistant':
      return assistant(event, writer);
    case 'user':
      return user(event, writer);
    case 'system':
      return system(event, writer);
    case 'result':
      return result(event, writer);
    case 'stream_event':
      // Partial messages (`--include-partial-messages`): the whole message follows as `assistant`.
      return;
    default:
      return otherEvent(event, writer);
  }
}
