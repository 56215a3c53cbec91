import * as podOutput from '../../store/pod-output.ts';
import * as pods from '../../store/pods.ts';
import type { DomainContext } from '../context.ts';
import { DROP_EPISODE_GAP_MS, droppedSummary, droppingNote, noteLine } from '../../protocol/output-notes.ts';
import { orgQuotas } from '../quotas/service.ts';

/** A per-org limit read is reused this long, so a changed quota applies within seconds. */
const LIMIT_TTL_MS = 10_000;
/**
 * Output arriving within this long of a pod's last write waits and is written together: a pod
 * printing fast costs one write per 100 ms (of at most the kept 1 MiB), not one per chunk, and
 * output that is superseded before it is written (outside the last 1 MiB) is never written at all.
 * A pod printing now and then has each chunk written at once.
 */
export const OUTPUT_COALESCE_MS = 100;

/**
 * The server's bucket holds two seconds of output and 4 KiB more: runners drop at the source with
 * one second (src/runner/launcher-child.mjs), so what an unmodified runner sends (chunks that
 * arrive bunched, its own note lines) always fits, and a modified one is still held to the rate.
 */
export const serverOutputBurst = (bytesPerSec: number): number => 2 * bytesPerSec + 4096;

interface PodStream {
  podId: number;
  /** The byte offset after all output accepted so far (written or still waiting). */
  end: number;
  /** Accepted output not written yet (it ends at `end`), and when the pod's output was last written. */
  pending: string[];
  pendingBytes: number;
  lastWriteAt: number;
  flushTimer: NodeJS.Timeout | null;
  /** Offset up to which chunks outside the kept tail have been deleted. */
  trimmedTo: number;
  endsWithNewline: boolean;
  /** Token bucket of the output quota: bytes that may be stored now. */
  tokens: number;
  refilledAt: number;
  dropped: number;
  lastDropAt: number | null;
}

/**
 * Where one runner's pod output goes (one per runner link): each chunk is appended at its offset,
 * within the organization's `pod_output_bytes_per_sec` quota (a token bucket per pod, see
 * `serverOutputBurst`; the runner already dropped at the source what is over it). What is over
 * the quota is dropped, and the output says so: one line when dropping starts (again only after
 * a second without drops) and one at the end with the count.
 * The stored output stays cheap to write whatever a pod prints: no write reads or rewrites what is
 * stored, output arriving fast is written together (see OUTPUT_COALESCE_MS), and chunks that fall
 * out of the kept 1 MiB are deleted once per MiB written. Its operations run one after another,
 * delayed writes included.
 */
export class PodOutputSink {
  private readonly streams = new Map<string, PodStream>();
  private limitRead: { at: number; limit: Promise<number> } | null = null;

  constructor(
    private readonly ctx: DomainContext,
    private readonly runner: { id: number; org_id: number },
    private readonly clock: () => number = Date.now,
    /** A delayed write failed (there is no caller to tell). */
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Every operation runs after the previous one has ended: delayed writes included, offsets stay in order. */
  private chain: Promise<void> = Promise.resolve();
  private inOrder(operation: () => Promise<void>): Promise<void> {
    const run = this.chain.then(operation);
    this.chain = run.catch(() => {});
    return run;
  }

  /** A chunk of a pod's output, as the runner sent it (ignored for pods not on this runner). */
  write(key: string, data: string): Promise<void> {
    return this.inOrder(() => this.writeNow(key, data));
  }

  /** The pod ended: its output is written whole, notes what was dropped, and what lies outside the tail goes. */
  finished(key: string): Promise<void> {
    return this.inOrder(() => this.finishedNow(key));
  }

  /** Writes every pod's waiting output now (the runner's link is closing). */
  flushAll(): Promise<void> {
    return this.inOrder(async () => {
      for (const stream of this.streams.values()) await this.flush(stream);
    });
  }

  private async writeNow(key: string, data: string): Promise<void> {
    const stream = await this.stream(key);
    if (!stream) return;
    const limit = await this.limit();
    const now = this.clock();
    let text = data;
    if (limit > 0) {
      stream.tokens = Math.min(serverOutputBurst(limit), stream.tokens + ((now - stream.refilledAt) * limit) / 1000);
      stream.refilledAt = now;
      const bytes = Buffer.byteLength(data);
      if (bytes > stream.tokens) {
        text = podOutput.keepHead(data, Math.floor(stream.tokens));
        const kept = Buffer.byteLength(text);
        stream.tokens -= kept;
        stream.dropped += bytes - kept;
        const newEpisode = stream.lastDropAt === null || now - stream.lastDropAt >= DROP_EPISODE_GAP_MS;
        stream.lastDropAt = now;
        // The marker is the server's note, not the pod's output: it does not count against the quota.
        if (newEpisode) text += this.marker(stream, text, droppingNote(limit));
      } else {
        stream.tokens -= bytes;
      }
    }
    await this.accept(stream, text);
  }

  private async finishedNow(key: string): Promise<void> {
    const stream = this.streams.get(key);
    if (!stream) return;
    this.streams.delete(key);
    if (stream.dropped > 0) await this.accept(stream, this.marker(stream, '', droppedSummary(stream.dropped)));
    await this.flush(stream);
    await this.trim(stream, 1);
  }


  private marker(stream: PodStream, before: string, text: string): string {
    return noteLine(text, before === '' ? stream.endsWithNewline : before.endsWith('\n'));
  }

  private async stream(key: string): Promise<PodStream | null> {
    const known = this.streams.get(key);
    if (known) return known;
    const db = this.ctx.store.db;
    const pod = await pods.findPodByKey(db, key);
    if (!pod || pod.runner_id !== this.runner.id) return null;
    const end = await podOutput.podOutputEnd(db, pod.id);
    const limit = await this.limit();
    const stream: PodStream = {
      podId: pod.id,
      end,
      pending: [],
      pendingBytes: 0,
      lastWriteAt: -Infinity,
      flushTimer: null,
      trimmedTo: 0,
      endsWithNewline: true,
      tokens: serverOutputBurst(limit),
      refilledAt: this.clock(),
      dropped: 0,
      lastDropAt: null,
    };
    this.streams.set(key, stream);
    return stream;
  }

  /** The organization's output quota (bytes per second per pod, 0: none), reread every 10 s. */
  limit(): Promise<number> {
    const now = this.clock();
    if (!this.limitRead || now - this.limitRead.at > LIMIT_TTL_MS) {
      const limit = orgQuotas(this.ctx, this.ctx.store.db, this.runner.org_id).then((q) => q.pod_output_bytes_per_sec);
      this.limitRead = { at: now, limit };
      limit.catch(() => (this.limitRead = null));
    }
    return this.limitRead.limit;
  }

  /** Output accepted for the pod: written now, or with what follows within OUTPUT_COALESCE_MS. */
  private async accept(stream: PodStream, text: string): Promise<void> {
    if (text === '') return;
    const bytes = Buffer.byteLength(text);
    stream.pending.push(text);
    stream.pendingBytes += bytes;
    stream.end += bytes;
    stream.endsWithNewline = text.endsWith('\n');
    // Waiting output wholly before the last 1 MiB would only be trimmed: it is never written.
    while (stream.pending.length > 1 && stream.pendingBytes - Buffer.byteLength(stream.pending[0]) >= podOutput.OUTPUT_KEEP_BYTES) {
      stream.pendingBytes -= Buffer.byteLength(stream.pending.shift()!);
    }
    if (stream.flushTimer) return;
    const wait = stream.lastWriteAt + OUTPUT_COALESCE_MS - this.clock();
    if (wait <= 0) {
      await this.flush(stream);
      return;
    }
    stream.flushTimer = setTimeout(() => {
      stream.flushTimer = null;
      this.inOrder(() => this.flush(stream)).catch(this.onError);
    }, wait);
    stream.flushTimer.unref();
  }

  /** Writes the pod's waiting output as one chunk at its offset. */
  private async flush(stream: PodStream): Promise<void> {
    if (stream.flushTimer) clearTimeout(stream.flushTimer);
    stream.flushTimer = null;
    if (stream.pending.length === 0) return;
    const text = stream.pending.join('');
    let start = stream.end - stream.pendingBytes;
    stream.pending = [];
    stream.pendingBytes = 0;
    stream.lastWriteAt = this.clock();
    const db = this.ctx.store.db;
    // Another writer can have taken the offset (a runner that reconnected to another replica
    // while this one still applied its last messages): continue after what is stored.
    for (let attempt = 1; !(await podOutput.appendOutputChunk(db, stream.podId, start, text)); attempt++) {
      if (attempt >= 5) throw new Error(`could not append output of pod ${stream.podId} at offset ${start}`);
      const stored = await podOutput.podOutputEnd(db, stream.podId);
      stream.end += Math.max(0, stored - start);
      start = Math.max(start, stored);
    }
    this.ctx.podOutputChanged?.(stream.podId);
    await this.trim(stream, podOutput.OUTPUT_KEEP_BYTES);
  }

  /** Deletes the chunks before the kept tail once at least `every` bytes of them have piled up. */
  private async trim(stream: PodStream, every: number): Promise<void> {
    const keepFrom = stream.end - podOutput.OUTPUT_KEEP_BYTES;
    if (keepFrom - stream.trimmedTo < every) return;
    await podOutput.trimPodOutput(this.ctx.store.db, stream.podId, keepFrom);
    stream.trimmedTo = keepFrom;
  }
}
