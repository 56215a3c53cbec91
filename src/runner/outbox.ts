import type { RunnerBody } from '../protocol/runner-link.ts';

export type KeptMessage = RunnerBody & { type: 'pod_started' | 'pod_output' | 'model_call' };

/**
 * pod_started / pod_output / model_call made while the runner has no connection: sent right after the next
 * hello, in order, instead of being dropped (outcomes are kept apart, until acknowledged).
 * Bounded: past `maxChars` of output the oldest output goes first.
 */
export class RunnerOutbox {
  private readonly messages: KeptMessage[] = [];
  private chars = 0;

  constructor(private readonly maxChars = 8 * 1024 * 1024) {}

  keep(message: KeptMessage): void {
    this.messages.push(message);
    if (message.type === 'pod_output') this.chars += message.data.length;
    while (this.chars > this.maxChars) {
      const index = this.messages.findIndex((m) => m.type === 'pod_output');
      const [dropped] = this.messages.splice(index, 1);
      if (dropped.type === 'pod_output') this.chars -= dropped.data.length;
    }
  }

  /** Everything kept, oldest first; the outbox is empty after. */
  takeAll(): KeptMessage[] {
    this.chars = 0;
    return this.messages.splice(0);
  }
}
