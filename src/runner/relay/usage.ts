/**
 * Reads the usage of one model call from its response as it passes through the relay, streamed
 * (server-sent events) or whole (JSON), for each API shape the catalogue knows
 * (src/agents/model-providers.ts). Token counts follow the convention of src/agents/output/usage.ts:
 * `input_tokens` is the input that was neither read from nor written to a prompt cache.
 */
import type { ModelProviderId } from '../../agents/model-providers.ts';

export interface CallUsage {
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The largest JSON body kept to read its usage (a whole, unstreamed answer); the rest passes through unread. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** What one response has shown of its usage so far; null fields were not reported (yet). */
class Seen {
  model: string | null = null;
  input: number | null = null;
  output: number | null = null;
  cacheRead: number | null = null;
  cacheWrite: number | null = null;
  /** Providers that count cached input inside the input total (OpenAI, Gemini). */
  inputIncludesCache = false;

  set(field: 'input' | 'output' | 'cacheRead' | 'cacheWrite', value: unknown): void {
    const n = num(value);
    if (n !== null) this[field] = n;
  }

  result(): CallUsage | null {
    if (this.input === null && this.output === null) return null;
    const cacheRead = this.cacheRead ?? 0;
    const cacheWrite = this.cacheWrite ?? 0;
    const input = this.input ?? 0;
    return {
      model: this.model,
      input_tokens: this.inputIncludesCache ? Math.max(0, input - cacheRead - cacheWrite) : input,
      output_tokens: this.output ?? 0,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
    };
  }
}

function anthropic(seen: Seen, event: Json): void {
  // message_start carries the message (input and cache counts); message_delta the running output
  // count (and, from newer API versions, the final input counts); an unstreamed answer is the message.
  const message = event.type === 'message_start' ? obj(event.message) : event.type === 'message' ? event : null;
  if (message) seen.model = str(message.model) ?? seen.model;
  const usage = obj(message?.usage) ?? (event.type === 'message_delta' ? obj(event.usage) : null);
  if (!usage) return;
  seen.set('input', usage.input_tokens);
  seen.set('output', usage.output_tokens);
  seen.set('cacheRead', usage.cache_read_input_tokens);
  seen.set('cacheWrite', usage.cache_creation_input_tokens);
}

function openai(seen: Seen, event: Json): void {
  seen.inputIncludesCache = true;
  // Responses streams put the response under `response` (response.completed and the like).
  const body = obj(event.response) ?? event;
  seen.model = str(body.model) ?? seen.model;
  const usage = obj(body.usage);
  if (!usage) return;
  // Responses: input_tokens/output_tokens; Chat Completions: prompt_tokens/completion_tokens.
  seen.set('input', usage.input_tokens ?? usage.prompt_tokens);
  seen.set('output', usage.output_tokens ?? usage.completion_tokens);
  const details = obj(usage.input_tokens_details) ?? obj(usage.prompt_tokens_details);
  seen.set('cacheRead', details?.cached_tokens);
}

function gemini(seen: Seen, event: Json): void {
  seen.inputIncludesCache = true;
  seen.model = str(event.modelVersion) ?? seen.model;
  const usage = obj(event.usageMetadata);
  if (!usage) return;
  // Each streamed chunk repeats the running totals; the last one is the call's. Thinking is billed as output.
  seen.set('input', usage.promptTokenCount);
  const output = (num(usage.candidatesTokenCount) ?? 0) + (num(usage.thoughtsTokenCount) ?? 0);
  if (num(usage.candidatesTokenCount) !== null || num(usage.thoughtsTokenCount) !== null) seen.output = output;
  seen.set('cacheRead', usage.cachedContentTokenCount);
}

const READERS: Record<ModelProviderId, (seen: Seen, event: Json) => void> = { anthropic, openai, gemini };

const LF = 0x0a;
const CR = 0x0d;
const USAGE = Buffer.from('"usage');

/**
 * Whether an event ends with the line feed at `p`: the line it ends is empty ("" or "\r"). `b1`
 * and `b2` are the two bytes before it. (No closure per call here: keepNames makes each cost.)
 */
const endsEvent = (b1: number | undefined, b2: number | undefined): boolean => b1 === LF || (b1 === CR && b2 === LF);

/** The index just past the last event end in `buf` (whose two bytes before it were `prev1`, `prev2`), or -1. */
function lastEventEnd(buf: Buffer, prev1: number, prev2: number): number {
  let p = buf.lastIndexOf(LF);
  while (p !== -1) {
    if (endsEvent(p >= 1 ? buf[p - 1] : prev1, p >= 2 ? buf[p - 2] : p === 1 ? prev1 : prev2)) return p + 1;
    p = p > 0 ? buf.lastIndexOf(LF, p - 1) : -1;
  }
  return -1;
}

/**
 * Fed the response body chunk by chunk (it is not held back: the caller passes each chunk on
 * first). A stream is read without decoding it: only the events that hold `"usage` (found by a
 * native byte search) are decoded and parsed (docs/agents.md "The relay's cost per call").
 */
export class UsageReader {
  private readonly seen = new Seen();
  private readonly read: (seen: Seen, event: Json) => void;
  private data: string[] = [];
  /** The bytes of the event under way (after the last event end), as they came. */
  private tail: Buffer[] = [];
  /** The last two bytes of the stream so far (-1: none), to find an event end split across chunks. */
  private prev1 = -1;
  private prev2 = -1;
  private first = true;
  private body: Buffer[] = [];
  private bodyBytes = 0;

  constructor(
    provider: ModelProviderId,
    private readonly streamed: boolean,
    /** The model the request named, until the response names its own. */
    requestModel: string | null,
  ) {
    this.read = READERS[provider];
    this.seen.model = requestModel;
  }

  write(chunk: Buffer): void {
    if (!this.streamed) {
      this.bodyBytes += chunk.length;
      if (this.bodyBytes <= MAX_BODY_BYTES) this.body.push(chunk);
      return;
    }
    if (chunk.length === 0) return;
    const end = lastEventEnd(chunk, this.prev1, this.prev2);
    this.prev2 = chunk.length > 1 ? chunk[chunk.length - 2] : this.prev1;
    this.prev1 = chunk[chunk.length - 1];
    if (end === -1) {
      this.tail.push(chunk);
      return;
    }
    const head = chunk.subarray(0, end);
    this.events(this.tail.length === 0 ? head : Buffer.concat([...this.tail, head]));
    this.tail = end < chunk.length ? [chunk.subarray(end)] : [];
  }

  /** Whole events (`buf` starts where one starts and ends where one ends): those that mention usage are read. */
  private events(whole: Buffer): void {
    const buf = this.opening(whole);
    let at = buf.indexOf(USAGE);
    while (at !== -1) {
      // The event around it: from the end of the one before (or the start) to its own end.
      let start = buf.lastIndexOf(LF, at);
      while (start !== -1 && !endsEvent(buf[start - 1], buf[start - 2])) start = start > 0 ? buf.lastIndexOf(LF, start - 1) : -1;
      let end = buf.indexOf(LF, at);
      while (end !== -1 && !endsEvent(buf[end - 1], buf[end - 2])) end = buf.indexOf(LF, end + 1);
      const stop = end === -1 ? buf.length : end + 1;
      this.lines(buf.toString('utf8', start + 1, stop));
      at = buf.indexOf(USAGE, stop);
    }
  }

  /** `buf` without the byte order mark that may open the stream (not part of its first line), when it is the stream's first piece read. */
  private opening(buf: Buffer): Buffer {
    const bom = this.first && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
    this.first = false;
    return bom ? buf.subarray(3) : buf;
  }

  /** Complete lines of one or more events. */
  private lines(text: string): void {
    for (const raw of text.split('\n')) this.line(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }

  private dispatch(): void {
    const text = this.data.join('\n');
    this.data = [];
    // Only events that carry usage are read (`usage`, Gemini's `usageMetadata`): the text deltas
    // in between, most of a stream, pass without being parsed.
    if (!text.includes('"usage')) return;
    this.parse(text);
  }

  private parse(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    // Gemini's streamGenerateContent without alt=sse answers one JSON array of chunks.
    for (const event of Array.isArray(value) ? value : [value]) {
      const o = obj(event);
      if (o) this.read(this.seen, o);
    }
  }

  /** The call's usage once its response has ended; null when the response reported none. */
  end(): CallUsage | null {
    if (this.streamed) {
      // The last event, if the stream did not end it with a blank line.
      if (this.tail.length > 0) {
        const rest = this.opening(Buffer.concat(this.tail));
        this.tail = [];
        this.lines(rest.toString('utf8'));
      }
      this.dispatch();
    } else if (this.bodyBytes <= MAX_BODY_BYTES) {
      this.parse(Buffer.concat(this.body).toString('utf8'));
    }
    return this.seen.result();
  }
}
