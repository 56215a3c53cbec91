/** The contract between the mock's HTTP server (server.ts) and one model API's wire format. */
import type { Conversation, MockUsage, Turn } from './script.ts';

export interface MockReply {
  /** An SSE stream: `event:` lines (when `event` is set) and `data:` lines of JSON (or a raw string such as `[DONE]`). */
  sse?: { event?: string; data: unknown }[];
  /** A plain JSON answer. */
  json?: unknown;
  /** What the reply reports as used, for the record (`null`: nothing, e.g. a token count). */
  usage: MockUsage | null;
}

export interface WireFormat {
  readonly name: string;
  matches(method: string, pathname: string): boolean;
  /** The conversation of a request (`tools` empty for a side request). */
  conversation(pathname: string, body: Record<string, unknown>): Conversation;
  /** The answer: `turn` is null for a side request; `id` is unique per request. */
  respond(request: { pathname: string; search: string; body: Record<string, unknown>; turn: Turn | null; turnIndex: number | null; id: string }): MockReply;
}
