/**
 * Pods prepared ahead of their slot (docs/runners.md "Pods prepared ahead of their slot"): the
 * runner builds such a pod's sandbox at once, bwrap and all, and holds the agent's exec behind a
 * go signal until the delay the server gave (`start_in_ms`) has passed.
 */

/**
 * The innermost wrapper of a gated agent: waits for one line on file descriptor 4 (a pipe the
 * launcher holds, ./launcher.ts `gated`), closes it and becomes the agent. A pipe closed without
 * the line (the pod was stopped, the runner died) ends it before the agent ever ran.
 */
const GATE_SCRIPT = 'read -r _ <&4 || exit 125; exec 4<&-; exec "$@"';

export function gatedCommand(command: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: '/bin/sh', args: ['-c', GATE_SCRIPT, 'drover-slot', command, ...args] };
}

/**
 * When the agents of one slot may start: `delayMs` after a start message was received, on the
 * monotonic clock and on the wall clock both (so an agent's own clock never reads a time before
 * it either). Every start of the slot gives such a bound, each at or after the slot in the
 * server's time; the earliest holds for all of them (`tighten`), and its waiters are let go
 * together, by one timer.
 */
export class SlotTime {
  private monotonicAt: number;
  private wallAt: number;
  private timer: NodeJS.Timeout | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(delayMs: number) {
    this.monotonicAt = performance.now() + delayMs;
    this.wallAt = Date.now() + delayMs;
  }

  /** Milliseconds left until the slot (≤ 0: reached). */
  remaining(): number {
    return Math.max(this.monotonicAt - performance.now(), this.wallAt - Date.now());
  }

  /** Another start of the same slot: its bound, when earlier, holds for every pod of the slot. */
  tighten(other: SlotTime): void {
    this.monotonicAt = Math.min(this.monotonicAt, other.monotonicAt);
    this.wallAt = Math.min(this.wallAt, other.wallAt);
    if (this.waiters.size > 0) this.arm();
  }

  /** Resolves at the slot (false), or as soon as `stopped` resolves (true then). */
  reached(stopped: Promise<void>): Promise<boolean> {
    if (this.remaining() <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = () => resolve(false);
      this.waiters.add(waiter);
      void stopped.then(() => {
        if (this.waiters.delete(waiter)) resolve(true);
      });
      this.arm();
    });
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const left = this.remaining();
    if (left > 0) {
      this.timer = setTimeout(() => this.arm(), Math.ceil(left));
      return;
    }
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
  }
}

/** The slots of a runner's pods prepared ahead, by the server's name for each (`slot_key`). */
export class SlotTimes {
  private readonly slots = new Map<string, SlotTime>();

  /** When the agent of a pod with this start may start; null: at once. */
  of(start: { start_in_ms?: number; slot_key?: string }): SlotTime | null {
    if (!start.start_in_ms) return null;
    const own = new SlotTime(start.start_in_ms);
    if (!start.slot_key) return own;
    for (const [key, slot] of this.slots) if (slot.remaining() < -60_000) this.slots.delete(key);
    const shared = this.slots.get(start.slot_key);
    if (!shared) {
      this.slots.set(start.slot_key, own);
      return own;
    }
    shared.tighten(own);
    return shared;
  }
}
