/**
 * Gemini CLI `--output-format stream-json` (docs/transcripts.md "Gemini CLI"): `init` (session,
 * model), `message` (the user's prompt; the assistant's text, streamed in `delta` pieces that make
 * one entry), `tool_use` (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`,
 * `status` success|error, `output`, `error`), `error` (`severity` warning|error) and `result`
 * (`status`, `error`, `stats`).
 */
import { otherEvent } from './json-lines.ts';
import { describeCall, num, outputText, readableError, record, str, type JsonObject } from './values.ts';
import type { EntryWriter } from './writer.ts';

export function geminiCliEvent(event: JsonObject, writer: EntryWriter): void {
  switch (event.type) {
    case 'init': {
      const model = str(event.model);
      return writer.status(`Session started${model ? ` (model ${model})` : ''}`);
    }
    case 'message': {
      const content = str(event.content) ?? '';
      if (event.role !== 'assistant') return writer.status(content);
      if (event.delta === true) return writer.textPiece(content);
      return writer.text(content);
    }
    case 'tool_use':
      return writer.call(str(event.tool_id), describeCall(str(event.tool_name) ?? 'tool', event.parameters ?? null));
    case 'tool_result': {
      const failed = event.status === 'error';
      const error = str(record(event.error).message);
      const output = failed && error !== null ? error : outputText(event.output ?? '');
      return writer.result(str(event.tool_id), output, failed);
    }
    case 'error': {
      const message = readableError(str(event.message) ?? 'error');
      return event.severity === 'warning' ? writer.status(message) : writer.error(message);
    }
    case 'result': {
      if (event.status === 'error') return writer.error(readableError(str(record(event.error).message) ?? 'the run failed'));
      const calls = num(record(event.stats).tool_calls);
      return writer.status(`Finished${calls === null ? '' : ` (${calls} tool call${calls === 1 ? '' : 's'})`}`);
    }
    default:
      return otherEvent(event, writer);
  }
}
