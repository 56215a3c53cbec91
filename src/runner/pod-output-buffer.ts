import { DROP_EPISODE_GAP_MS, droppedSummary, droppingNote, noteLine } from '../protocol/output-notes.ts';

/** Output goes out at least every flush interval, and at once past this size (the protocol caps a message). */
const MAX_CHUNK = 256 * 1024;

/**
 * One pod's output on its way to the server: chunks are gathered and sent together (at least every
 * `flushMs`, at once past 256 KiB), `[drover] …` notes start on a line of their own, and output the
 * launcher dropped over the organization's quota is said once per episode and summed at the end.
 */
export class PodOutputBuffer {
  private pending = '';
  /** Whether the output so far ends a line (a note starts on a line of its own). */
  private atLineStart = true;
  /** Output the launcher dropped over the quota, and when it last did. */
  private droppedBytes = 0;
  private lastDropAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (data: string) => void,
    private readonly flushMs: number,
  ) {}

  add(text: string): void {
    if (text.length === 0) return;
    this.pending += text;
    this.atLineStart = text.endsWith('\n');
    if (this.pending.length >= MAX_CHUNK) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.flushMs);
  }

  /** A line of Drover's own in the output. */
  note(text: string): void {
    this.add(noteLine(text, this.atLineStart));
  }

  /** Output was dropped over the quota: the output says so when dropping starts, not for every chunk. */
  dropped(bytes: number, limitBytesPerSec: number): void {
    const now = Date.now();
    if (this.lastDropAt === null || now - this.lastDropAt >= DROP_EPISODE_GAP_MS) this.note(droppingNote(limitBytesPerSec));
    this.lastDropAt = now;
    this.droppedBytes += bytes;
  }

  /** The pod ended: what was dropped is summed up, and everything still held is sent. */
  end(): void {
    if (this.droppedBytes > 0) this.note(droppedSummary(this.droppedBytes));
    this.flush();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const data = this.pending;
    this.pending = '';
    this.send(data);
  }
}
