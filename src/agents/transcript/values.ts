/**
 * Reading the loosely typed values of agents' JSON events, and turning them into text a person
 * reads: tool titles, error messages, tool outputs.
 */
import { fileEdits } from './edits.ts';
import type { FileEdit } from './types.ts';

export type JsonObject = Record<string, unknown>;

export const record = (value: unknown): JsonObject => (value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {});
export const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
export const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** The text of a tool's output however the agent shapes it: a string, `{text}` blocks, arrays of them. */
export function outputText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(outputText).filter((part) => part !== '').join('\n');
  const object = record(value);
  if (typeof object.text === 'string') return object.text;
  if (object.type === 'image') return '[image]';
  if ('content' in object) return outputText(object.content);
  if ('output' in object) return outputText(object.output);
  return JSON.stringify(value);
}

function messageOf(value: unknown): string | null {
  const object = record(value);
  return str(record(object.error).message) ?? str(object.message) ?? str(object.error);
}

/**
 * An error message with the JSON body an API answered replaced by that body's message
 * (`[API Error: {"error":{"message":"…"}}]` → `[API Error: …]`), so no raw JSON reaches a reader.
 */
export function readableError(message: string): string {
  const start = message.indexOf('{');
  const end = message.lastIndexOf('}');
  if (start === -1 || end <= start) return message;
  try {
    const inner = messageOf(JSON.parse(message.slice(start, end + 1)));
    return inner === null ? message : `${message.slice(0, start)}${inner}${message.slice(end + 1)}`;
  } catch {
    return message;
  }
}

/** The human text an unknown event carries (`message`, `text`, `content`, `error`), or null when it carries none. */
export function eventMessage(event: JsonObject): string | null {
  const error = messageOf({ error: event.error });
  return str(event.message) ?? str(event.text) ?? str(event.content) ?? (error === null ? null : readableError(error));
}

/** Tools that run a command line, by the names the agents give them. */
const SHELL_TOOLS = new Set(['bash', 'run_shell_command', 'shell', 'exec_command', 'local_shell']);

function commandOf(name: string, input: JsonObject): string | null {
  if (!SHELL_TOOLS.has(name.toLowerCase())) return null;
  const command = input.command ?? input.cmd;
  if (Array.isArray(command)) return command.map(String).join(' ');
  return str(command);
}

/** Argument names whose value says what a call is about, most telling first. */
const SUBJECT_KEYS = ['file_path', 'filePath', 'absolute_path', 'path', 'pattern', 'query', 'url', 'description', 'prompt'];
const TITLE_MAX = 160;

const oneLine = (value: string): string => {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line;
};

function subject(input: JsonObject): string {
  for (const key of SUBJECT_KEYS) {
    const value = str(input[key]);
    if (value !== null && value.trim() !== '') return oneLine(value);
  }
  const pairs = Object.entries(input)
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value))
    .map(([key, value]) => `${key}=${String(value)}`);
  return oneLine(pairs.join(' '));
}

export interface ToolCall {
  name: string;
  input: unknown;
  command: string | null;
  edits: FileEdit[] | null;
  /** The call's title: `$ <command>`, `<Tool> <paths>`, or `<tool> <what it is about>`. */
  title: string;
}

/** A tool call as the transcript shows it; `command` and `edits` may be given where the agent's event says them its own way. */
export function describeCall(name: string, input: unknown, known: { command?: string | null; edits?: FileEdit[] | null } = {}): ToolCall {
  const command = known.command ?? commandOf(name, record(input));
  const edits = known.edits ?? fileEdits(name, input);
  let title: string;
  if (command !== null) title = `$ ${command}`;
  else if (edits !== null && edits.length > 0) title = `${name} ${[...new Set(edits.map((e) => e.path))].join(', ')}`;
  else title = `${name} ${typeof input === 'string' ? oneLine(input) : subject(record(input))}`.trim();
  return { name, input, command, edits, title };
}
