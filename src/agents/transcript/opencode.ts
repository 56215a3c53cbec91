/**
 * OpenCode `run --format json` (docs/transcripts.md "OpenCode"): every event has a `part`. `text`
 * (the assistant's text; `synthetic` ones are OpenCode's own notes), `reasoning`, `tool_use` (a
 * tool part whose `state` holds `input`, and once done `output` or `error`, and for `bash` the
 * exit code in `metadata.exit`: call and result come in one event) and `error` (`error.name`,
 * `error.data.message`); `step_start` and `step_finish` (tokens and cost per model step) are
 * bookkeeping.
 */
import { otherEvent } from './json-lines.ts';
import { describeCall, num, outputText, readableError, record, str, type JsonObject } from './values.ts';
import type { EntryWriter } from './writer.ts';

function toolUse(part: JsonObject, writer: EntryWriter): void {
  const state = record(part.state);
  const id = str(part.callID) ?? str(part.id);
  const name = str(part.tool) ?? 'tool';
  if (id === null || !writer.hasCall(id)) writer.call(id, describeCall(name, state.input ?? null));
  if (state.status === 'error') return writer.result(id, str(state.error) ?? 'error', true, name);
  if (state.status !== 'completed') return;
  const exit = num(record(state.metadata).exit);
  writer.result(id, outputText(state.output ?? ''), exit !== null && exit !== 0, name);
}

export function opencodeEvent(event: JsonObject, writer: EntryWriter): void {
  const part = record(event.part);
  switch (event.type) {
    case 'text':
      return part.synthetic === true ? writer.status(str(part.text) ?? '') : writer.text(str(part.text) ?? '');
    case 'reasoning':
      return writer.status(str(part.text) ?? '');
    case 'tool_use':
      return toolUse(part, writer);
    case 'step_start':
    case 'step_finish':
      return;
    case 'error': {
      const error = record(event.error);
      const message = str(record(error.data).message) ?? str(error.message) ?? str(error.name) ?? 'error';
      return writer.error(readableError(message));
    }
    default:
      return otherEvent(event, writer);
  }
}
