import { ACTIVE_POD_STATUSES } from '../protocol/enums.ts';
import type { Store } from '../store/db.ts';
import { readPodOutputFrom } from '../store/pod-output.ts';
import { findPodByKey } from '../store/pods.ts';
import type { PodRow } from '../store/schema-runners.ts';
import type { PodOutputSignals } from './output-signals.ts';

/** At most this much output in one `output` event. */
const EVENT_BYTES = 64 * 1024;
/** A stream looks again this often even without a wake-up (one lost across replicas costs no more). */
const POLL_MS = 2_000;

const ACTIVE = new Set<string>(ACTIVE_POD_STATUSES);

export interface OutputStreamSink {
  /** False while the client has not taken what it was sent: nothing more is read until `drained`. */
  write(frame: string): boolean;
  /** Resolves when the client has taken what it was sent, or the stream closed. */
  drained(): Promise<void>;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

/**
 * A pod's output from byte `offset` as SSE frames (docs/events.md): `output` events
 * `{"offset","data"}` for what is stored, then, live, for what is appended while the pod runs,
 * and once it has ended and everything stored has been sent, one `end` event
 * `{"status","exit_code"}`. Resolves when the stream is done (ended, or closed by the client).
 *
 * Paced by the client: while its socket holds output it has not taken, nothing more is read. A
 * client slower than the pod gets the output at its own pace; when it falls behind what is kept
 * (the last 1 MiB), the next event starts at the oldest byte kept (its `offset` says so).
 */
export async function streamPodOutput(store: Store, signals: PodOutputSignals, pod: PodRow, offset: number, sink: OutputStreamSink): Promise<void> {
  let woken: boolean;
  let wakeUp: (() => void) | null = null;
  const unwatch = signals.watch(pod.id, () => {
    woken = true;
    wakeUp?.();
  });
  sink.onClose(() => wakeUp?.());
  try {
    let next = offset;
    while (!sink.closed) {
      woken = false;
      // The pod's state is read before its output: output stored before it ended is read after.
      const current = (await findPodByKey(store.db, pod.key)) ?? pod;
      for (;;) {
        const read = await readPodOutputFrom(store.db, pod.id, next, EVENT_BYTES);
        if (read.data.length === 0) {
          next = Math.max(next, read.next);
          break;
        }
        const taken = sink.write(`event: output\ndata: ${JSON.stringify({ offset: read.offset, data: read.data })}\n\n`);
        next = read.next;
        if (!taken) await sink.drained();
        if (sink.closed) return;
      }
      if (!ACTIVE.has(current.status)) {
        sink.write(`event: end\ndata: ${JSON.stringify({ status: current.status, exit_code: current.exit_code })}\n\n`);
        return;
      }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  } finally {
    unwatch();
  }
}
