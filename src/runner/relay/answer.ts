/**
 * One answer on its way from the upstream to the agent (docs/agents.md "The relay's cost per
 * call"): passed on as it comes, with what came in one read written at once (one chunk, not one
 * per event), its head with its first bytes and its end with its last (one packet when it all
 * came at once); nothing is held past the current turn of the event loop. The usage reader is fed
 * each piece after it was written, and `ended` gets the call's usage once the answer is over
 * (ended or cut short). A class, not closures: the build keeps function names, which costs a
 * call per closure made.
 */
import type http from 'node:http';
import type { CallUsage, UsageReader } from './usage.ts';

function flushAnswer(answer: PassedAnswer): void {
  answer.flush();
}

function headAlone(answer: PassedAnswer): void {
  answer.headIfAlone();
}

export class PassedAnswer {
  private pending: Buffer[] = [];
  private scheduled = false;
  private wrote = false;
  private over = false;

  constructor(
    private readonly answer: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    private readonly reader: UsageReader | null,
    private readonly ended: (usage: CallUsage | null) => void,
  ) {
    // A head that came alone (no body in the same read) is not kept waiting for the body.
    setImmediate(headAlone, this);
    answer.on('data', (chunk: Buffer) => {
      this.pending.push(chunk);
      if (!this.scheduled) {
        this.scheduled = true;
        process.nextTick(flushAnswer, this);
      }
    });
    answer.on('end', () => {
      this.flush();
      if (!res.writableEnded) res.end();
      this.finish();
    });
    answer.on('error', () => res.destroy());
    // What a call cut short used is counted too (the provider bills it).
    answer.on('close', () => {
      if (this.reader) for (const chunk of this.pending) this.reader.write(chunk);
      this.pending = [];
      this.finish();
    });
  }

  headIfAlone(): void {
    if (!this.wrote && !this.res.writableEnded && !this.res.destroyed) this.res.flushHeaders();
  }

  /** Writes what came since the last write, as one piece; ends the answer with it when nothing more is to come. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const chunks = this.pending;
    this.pending = [];
    const { res, answer } = this;
    if (!res.writableEnded) {
      const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      this.wrote = true;
      if (answer.complete && answer.readableLength === 0) res.end(data);
      else if (!res.write(data)) {
        answer.pause();
        res.once('drain', () => answer.resume());
      }
    }
    if (this.reader) for (const chunk of chunks) this.reader.write(chunk);
  }

  private finish(): void {
    if (this.over) return;
    this.over = true;
    this.ended(this.reader ? this.reader.end() : null);
  }
}
