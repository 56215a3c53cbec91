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

/** Fed the response body chunk by chunk (it is not held back: the caller passes each chunk on first). */
export class UsageReader {
  private readonly seen = new Seen();
  private readonly read: (seen: Seen, event: Json) => void;
  private pending = '';
  private data: string[] = [];
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private readonly decoder = new TextDecoder();

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
    this.pending += this.decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) !== -1) {
      const line = this.pending.slice(0, newline).replace(/\r$/, '');
      this.pending = this.pending.slice(newline + 1);
      this.line(line);
    }
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
      this.line(this.pending.replace(/\r$/, ''));
      this.dispatch();
    } else if (this.bodyBytes <= MAX_BODY_BYTES) {
      this.parse(Buffer.concat(this.body).toString('utf8'));
    }
    return this.seen.result();
  }
}
