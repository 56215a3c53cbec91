/**
 * Everything live in the dashboard goes through this module (docs/events.md): one Server-Sent
 * Events connection to `GET /events` shared by every view, and one `GET /pods/:key/output/stream`
 * per terminal on screen. Both are read with fetch (EventSource cannot send the X-API-Key header),
 * resume after a dropped connection with Last-Event-ID / offset, and never poll.
 */
import { authHeaders, errorOf, orgBase, type ApiError } from './api.ts';
import type { Session } from './session.ts';
import { readSse, type SseMessage } from './sse.ts';

export interface DroverEvent {
  id: number;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'unavailable';
type Listener = (event: DroverEvent) => void;

const RETRY_MS = [500, 1000, 2000, 5000, 10000];

/** The org's event stream, shared: views add listeners; a `reset` event reaches every listener. */
export class EventHub {
  private listeners = new Set<Listener>();
  private stateListeners = new Set<(state: LiveState, why?: string) => void>();
  private lastId: string | null = null;
  private abort = new AbortController();
  state: LiveState = 'connecting';
  why = '';

  constructor(private readonly session: Session) {
    void this.run();
  }

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (state: LiveState, why?: string) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  close(): void {
    this.abort.abort();
    this.listeners.clear();
  }

  private setState(state: LiveState, why = ''): void {
    this.state = state;
    this.why = why;
    for (const listener of this.stateListeners) listener(state, why);
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.abort.signal.aborted) {
      try {
        const headers: Record<string, string> = { ...authHeaders(this.session), Accept: 'text/event-stream' };
        if (this.lastId) headers['Last-Event-ID'] = this.lastId;
        const response = await fetch(`${orgBase(this.session.org)}/events`, { headers, signal: this.abort.signal });
        if (!response.ok || !response.body) {
          const error: ApiError = await errorOf(response);
          // No stream on this server (yet), or not allowed: say so, and try again later.
          this.setState('unavailable', error.message);
        } else {
          attempt = 0;
          const resumed = this.lastId !== null;
          this.setState('live');
          // Without an id to resume from, events between the views' first reads and now may be
          // missing: the views reload once, as after a `reset`.
          if (!resumed) this.emit({ id: 0, type: 'reset', created_at: new Date().toISOString(), data: {} });
          await readSse(response.body, (message) => this.dispatch(message), this.abort.signal);
        }
      } catch {
        if (this.abort.signal.aborted) return;
      }
      if (this.abort.signal.aborted) return;
      if (this.state === 'live') this.setState('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]));
    }
  }

  private dispatch(message: SseMessage): void {
    if (message.id) this.lastId = message.id;
    let parsed: DroverEvent;
    try {
      const body = JSON.parse(message.data) as Partial<DroverEvent>;
      parsed = { id: Number(body.id ?? message.id), type: body.type ?? message.event, created_at: body.created_at ?? '', data: (body.data ?? {}) as Record<string, unknown> };
    } catch {
      parsed = { id: Number(message.id), type: message.event, created_at: '', data: {} };
    }
    this.emit(parsed);
  }

  private emit(event: DroverEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}

/**
 * The resource an event carries: its `data` is the resource as the API shows it (`ticket.*` a
 * ticket, `pod.*` a pod, `message.created` a message, …); `data.<name>` (an envelope) is read too.
 */
export function resourceOf<T>(event: DroverEvent, name: string): T | null {
  const wrapped = event.data[name];
  if (wrapped && typeof wrapped === 'object') return wrapped as T;
  return event.type.startsWith(`${name}.`) && event.data && typeof event.data === 'object' ? (event.data as T) : null;
}

export interface OutputHandlers {
  onOutput(text: string, offset: number): void;
  onEnd(status: string, exitCode: number | null): void;
  onError(message: string): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A pod's output, live from byte `from` until its `end` event; returns a function that stops it. */
export function streamPodOutput(session: Session, podKey: string, handlers: OutputHandlers, from = 0): () => void {
  const abort = new AbortController();
  let offset = from;
  let ended = false;
  void (async () => {
    let attempt = 0;
    while (!abort.signal.aborted && !ended) {
      try {
        const response = await fetch(`${orgBase(session.org)}/pods/${encodeURIComponent(podKey)}/output/stream?offset=${offset}`, {
          headers: { ...authHeaders(session), Accept: 'text/event-stream' },
          signal: abort.signal,
        });
        if (!response.ok || !response.body) {
          handlers.onError((await errorOf(response)).message);
          return;
        }
        attempt = 0;
        await readSse(
          response.body,
          (message) => {
            const body = JSON.parse(message.data) as { offset?: number; data?: string; status?: string; exit_code?: number | null };
            if (message.event === 'output' && typeof body.data === 'string') {
              const start = body.offset ?? offset;
              const bytes = encoder.encode(body.data);
              // A resumed stream may repeat bytes we already have: keep only the new ones.
              const text = start < offset ? decoder.decode(bytes.subarray(Math.min(bytes.length, offset - start))) : body.data;
              offset = Math.max(offset, start + bytes.length);
              if (text) handlers.onOutput(text, start);
            } else if (message.event === 'end') {
              ended = true;
              handlers.onEnd(body.status ?? 'unknown', body.exit_code ?? null);
            }
          },
          abort.signal,
        );
      } catch {
        if (abort.signal.aborted) return;
      }
      if (!ended) await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]));
    }
  })();
  return () => abort.abort();
}
