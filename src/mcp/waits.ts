/**
 * The waiting tools, `channel_wait` and `pod_wait`, on the event stream (`GET /events`, 
 * docs/events.md) instead of polling: the stream is opened first, then the state waited for is read; if it is
 * not there yet, the next matching event wakes the wait and the state is read again. An event that
 * arrives between the read and the wait is therefore never missed. (A server of this version starts
 * a stream at the newest event as of before its headers; an earlier one subscribed just after them,
 * so the state is read once more a second after the stream opened.) The wait ends at its timeout, or when the MCP client cancels the call.
 */
import { ApiError, type DroverClient, type Schemas } from '../client/index.ts';
import { openEvents, type DroverEvent, type EventFilters } from '../client/sse.ts';

const FINAL = new Set(['completed', 'failed', 'terminated']);

/** Runs `wait` with a signal that aborts at the deadline or the caller's cancel; null when the deadline passed first. */
async function bounded<T>(timeoutMs: number, cancel: AbortSignal, wait: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const done = new AbortController();
  const signal = AbortSignal.any([deadline, cancel, done.signal]);
  try {
    return await wait(signal);
  } catch (error) {
    if (deadline.aborted && !cancel.aborted) return null;
    throw error;
  } finally {
    done.abort(); // closes the event stream
  }
}

/** Waits on an open stream for an event `matches` accepts; false when the stream ended first. */
async function nextMatching(events: AsyncGenerator<DroverEvent>, matches: (event: DroverEvent) => boolean): Promise<boolean> {
  for (;;) {
    const { value, done } = await events.next();
    if (done) return false;
    if (matches(value)) return true;
  }
}

/** How often a server without the event stream is asked again (see `wakeUps`). */
const POLL_MS = 1000;
/**
 * An earlier server answered the stream's headers a moment before its subscription was in place:
 * the state is read once more this long after the stream opened, in case it changed in between.
 */
const RECHECK_MS = 1000;

const TICK = { id: 0, type: 'poll', created_at: '', data: {} } as DroverEvent;

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

/** The stream's events, with one extra wake-up RECHECK_MS after it opened (unless an event came first). */
async function* withRecheck(events: AsyncGenerator<DroverEvent>, signal: AbortSignal): AsyncGenerator<DroverEvent> {
  const first = events.next();
  const winner = await Promise.race([first, delay(RECHECK_MS, signal).then(
    () => 'tick' as const,
    () => 'tick' as const, // aborted: the stream's own read fails with it
  )]);
  if (winner === 'tick') {
    yield TICK;
    const next = await first;
    if (next.done) return;
    yield next.value;
  } else {
    if (winner.done) return;
    yield winner.value;
  }
  yield* events;
}

/**
 * The wake-ups of a wait: the server's events matching `filters`, or, from a server that has no
 * `GET /events` yet (an older Drover answers 404), one wake-up a second: a bounded long-poll.
 */
async function wakeUps(client: DroverClient, filters: EventFilters, signal: AbortSignal): Promise<AsyncGenerator<DroverEvent>> {
  try {
    const events = await openEvents(client, filters, signal);
    signal.throwIfAborted();
    return withRecheck(events, signal);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404 && error.code === 'NOT_FOUND')) throw error;
    return (async function* ticks() {
      for (;;) {
        await delay(POLL_MS, signal);
        yield TICK;
      }
    })();
  }
}

const isPoll = (event: DroverEvent) => event.type === 'poll';

type Message = Schemas['ChannelMessage'];

/** The messages of a channel newer than `after` (default: its latest message now), waiting up to `timeoutMs` for one. */
export async function waitForMessages(
  client: DroverClient,
  channelId: number,
  after: number | undefined,
  timeoutMs: number,
  cancel: AbortSignal,
): Promise<{ messages: Message[]; timed_out: boolean }> {
  const path = { ...client.path, id: channelId };
  const read = (query: { after?: number; limit: number }) =>
    client.call(client.api.GET('/api/v1/ext/orgs/{org}/channels/{id}/messages', { params: { path, query } }));
  const found = await bounded(timeoutMs, cancel, async (signal) => {
    const events = await wakeUps(client, { types: 'message.created', channel_id: channelId }, signal);
    const since = after ?? (await read({ limit: 1 })).data.messages[0]?.id ?? 0;
    for (;;) {
      const { data } = await read({ after: since, limit: 100 });
      if (data.messages.length > 0) return data.messages;
      const newer = (event: DroverEvent) => isPoll(event) || ((event.data.message as { id?: number } | undefined)?.id ?? Infinity) > since;
      if (!(await nextMatching(events, newer))) throw new Error('the event stream ended');
    }
  });
  return found === null ? { messages: [], timed_out: true } : { messages: found, timed_out: false };
}

/** The pod once it has ended, waiting up to `timeoutMs`; `ended: false` with the pod as it is at the timeout. */
export async function waitForPod(client: DroverClient, podKey: string, timeoutMs: number, cancel: AbortSignal): Promise<{ pod: Schemas['Pod']; ended: boolean }> {
  const read = async () => (await client.call(client.api.GET('/api/v1/ext/orgs/{org}/pods/{key}', { params: { path: { ...client.path, key: podKey } } }))).data.pod;
  const ended = await bounded(timeoutMs, cancel, async (signal) => {
    const events = await wakeUps(client, { types: 'pod.updated', pod_key: podKey }, signal);
    for (;;) {
      const pod = await read();
      if (FINAL.has(pod.status)) return pod;
      const final = (event: DroverEvent) => isPoll(event) || FINAL.has(String((event.data.pod as { status?: string } | undefined)?.status));
      if (!(await nextMatching(events, final))) throw new Error('the event stream ended');
    }
  });
  return ended === null ? { pod: await read(), ended: false } : { pod: ended, ended: true };
}
