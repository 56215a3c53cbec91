/**
 * What the relay reads of a request body (docs/agents.md "The relay's cost per call"): the model
 * it names and, for a streamed Chat Completions call, whether its usage was asked for. Agents
 * send their whole conversation on every call (hundreds of KiB): the body is scanned for its
 * top-level keys, skipping every value it does not need without building it, instead of parsed.
 */
import type { ModelProviderId } from '../../agents/model-providers.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(buf: Buffer, i: number): number {
  while (isSpace(buf[i])) i++;
  return i;
}

/** The index just past the string that opens at `i` (a quote), or -1 when it does not close. */
function stringEnd(buf: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = buf.indexOf(QUOTE, from);
    if (quote === -1) return -1;
    let k = quote - 1;
    while (buf[k] === BACKSLASH) k--;
    // An even number of backslashes before it: the quote is not escaped.
    if ((quote - 1 - k) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just past the JSON value that starts at `i`, or -1 when it is cut short. Strings are jumped over natively. */
function valueEnd(buf: Buffer, i: number): number {
  const c = buf[i];
  if (c === QUOTE) return stringEnd(buf, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    let j = i;
    while (j < buf.length) {
      const b = buf[j];
      if (b === QUOTE) {
        j = stringEnd(buf, j);
        if (j === -1) return -1;
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return -1;
  }
  // A number, true, false or null.
  let j = i;
  while (j < buf.length && buf[j] !== COMMA && buf[j] !== CLOSE_OBJECT && buf[j] !== CLOSE_ARRAY && !isSpace(buf[j])) j++;
  return j > i ? j : -1;
}

/** Where a top-level value lies in the body: `buf.subarray(start, end)` is its JSON text. */
export interface Span {
  start: number;
  end: number;
}

/**
 * The spans of the top-level values of `keys` in a JSON object body (a key that is not there has
 * none); null when the body is not an object this scan can read (then the caller parses it).
 * With `all`, the whole object is scanned and a repeated key's last value wins, as with
 * JSON.parse; without, the scan stops once every key was found (the first value wins).
 */
export function topLevelValues(buf: Buffer, keys: readonly string[], all: boolean): Map<string, Span> | null {
  const found = new Map<string, Span>();
  let i = skipSpace(buf, 0);
  if (buf[i] !== OPEN_OBJECT) return null;
  i = skipSpace(buf, i + 1);
  if (buf[i] === CLOSE_OBJECT) return found;
  for (;;) {
    if (buf[i] !== QUOTE) return null;
    const keyEnd = stringEnd(buf, i);
    if (keyEnd === -1) return null;
    const key = keyText(buf, i, keyEnd);
    if (key === null) return null;
    const colon = skipSpace(buf, keyEnd);
    if (buf[colon] !== COLON) return null;
    const start = skipSpace(buf, colon + 1);
    const end = valueEnd(buf, start);
    if (end === -1) return null;
    if (keys.includes(key)) {
      found.set(key, { start, end });
      if (!all && found.size === keys.length) return found;
    }
    i = skipSpace(buf, end);
    if (buf[i] === CLOSE_OBJECT) return found;
    if (buf[i] !== COMMA) return null;
    i = skipSpace(buf, i + 1);
  }
}

/** A key's text: as it is when it has no escapes (the common case), else decoded; null when it is not a valid string. */
function keyText(buf: Buffer, start: number, end: number): string | null {
  const raw = buf.toString('utf8', start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(buf.toString('utf8', start, end)) as string;
  } catch {
    return null;
  }
}

/** The JSON value of a span; undefined when it does not parse. */
function spanValue(buf: Buffer, span: Span | undefined): unknown {
  if (!span) return undefined;
  try {
    return JSON.parse(buf.toString('utf8', span.start, span.end)) as unknown;
  } catch {
    return undefined;
  }
}

const INCLUDE_USAGE = Buffer.from('"stream_options":{"include_usage":true},');

/**
 * The model the request names (until the answer names its own), and the body to send: a streamed
 * Chat Completions call is asked to include its usage (`stream_options.include_usage`), which
 * OpenAI otherwise leaves out of streams.
 */
export function prepareBody(provider: ModelProviderId, pathname: string, body: Buffer, contentType: string | undefined): { forwarded: Buffer; model: string | null } {
  const fromPath = /\/models\/([^/:]+)/.exec(pathname)?.[1] ?? null;
  if (body.length === 0 || !String(contentType ?? 'application/json').includes('json')) return { forwarded: body, model: fromPath };
  const chat = provider === 'openai' && pathname.endsWith('/chat/completions');
  const spans = chat ? topLevelValues(body, ['model', 'stream', 'stream_options'], true) : topLevelValues(body, ['model'], false);
  if (!spans) return parsedBody(chat, body, fromPath);
  const value = spanValue(body, spans.get('model'));
  const model = typeof value === 'string' ? value : fromPath;
  if (!chat || spanValue(body, spans.get('stream')) !== true) return { forwarded: body, model };
  // Asked for already, or options to merge with: the rare case, parsed.
  if (spans.has('stream_options')) return parsedBody(chat, body, fromPath);
  const open = skipSpace(body, 0) + 1;
  return { forwarded: Buffer.concat([body.subarray(0, open), INCLUDE_USAGE, body.subarray(open)]), model };
}

/** The same read by parsing the whole body: for what the scan does not read (not an object, stream_options to merge). */
function parsedBody(chat: boolean, body: Buffer, fromPath: string | null): { forwarded: Buffer; model: string | null } {
  let parsed: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (!value || typeof value !== 'object' || Array.isArray(value)) return { forwarded: body, model: fromPath };
    parsed = value as Record<string, unknown>;
  } catch {
    return { forwarded: body, model: fromPath };
  }
  const model = typeof parsed.model === 'string' ? parsed.model : fromPath;
  if (chat && parsed.stream === true) {
    const options = (parsed.stream_options ?? {}) as Record<string, unknown>;
    if (options.include_usage !== true) {
      parsed.stream_options = { ...options, include_usage: true };
      return { forwarded: Buffer.from(JSON.stringify(parsed)), model };
    }
  }
  return { forwarded: body, model };
}
