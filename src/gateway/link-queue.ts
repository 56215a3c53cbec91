/**
 * The order in which a runner link applies its work (docs/design.md "The runner link"): one step at
 * a time, in the order it arrived, except that consecutive steps that each concern one pod, a
 * different pod each, run side by side (docs/decisions.md "Runners and pods": a burst on one
 * link). A pod's own steps (started, output, exited; a start sent to it) keep their order, and a
 * step about no single pod (hello, a heartbeat's reconcile, a credential) waits for everything
 * before it and holds back everything after it.
 *
 * Side by side, a burst of 500 `pod_started` reports costs a few shared commits instead of 500
 * one after another, each waiting for the commit of the one before.
 */

/** How many steps at most run side by side. */
const MAX_SIDE_BY_SIDE = 100;

interface Step {
  /** The pod the step concerns, or null when it concerns more (or other things) than one pod. */
  pod: string | null;
  run: () => Promise<void>;
}

export class LinkQueue {
  private readonly waiting: Step[] = [];
  private running: Promise<void> | null = null;

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Resolves once everything enqueued so far (and whatever was enqueued while it ran) is done. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Adds a step; `pod` when it concerns that one pod only. */
  push(run: () => Promise<void>, pod: string | null = null): void {
    this.waiting.push({ pod, run });
    this.running ??= this.drain();
  }

  private async drain(): Promise<void> {
    // Started from push(): the caller's turn ends before the first step runs, as with a promise chain.
    await Promise.resolve();
    try {
      while (this.waiting.length > 0) {
        const group = this.nextGroup();
        if (group.length === 1) await this.settle(group[0]);
        else await Promise.all(group.map((step) => this.settle(step)));
      }
    } finally {
      this.running = null;
    }
  }

  /** The longest run of waiting steps about distinct single pods (at least the first step). */
  private nextGroup(): Step[] {
    const first = this.waiting.shift()!;
    if (first.pod === null) return [first];
    const group = [first];
    const pods = new Set([first.pod]);
    while (group.length < MAX_SIDE_BY_SIDE) {
      const next = this.waiting[0];
      if (!next || next.pod === null || pods.has(next.pod)) break;
      pods.add(next.pod);
      group.push(this.waiting.shift()!);
    }
    return group;
  }

  private async settle(step: Step): Promise<void> {
    try {
      await step.run();
    } catch (error) {
      this.onError(error);
    }
  }
}
