import type { PodReport, PodSpec } from '../protocol/runner-link.ts';
import type { DeliveryReport } from '../protocol/delivery.ts';
import type { GroupProcess } from './process-group.ts';
import type { PodOutputBuffer } from './pod-output-buffer.ts';
import { PodResults, SessionTotals } from './pod-results.ts';
import type { PodWalls } from './limits/pod-walls.ts';
import type { PodNetwork } from './network/index.ts';
import { podPhases, type PodPhases } from './pod-phases.ts';
import type { PreparedWorkspace } from './workspaces.ts';
import type { SlotTime } from './slot-gate.ts';

/** One pod the supervisor runs: its spec, process, output, results and how it is being ended. */
export class RunningPod {
  state: PodReport['state'] = 'preparing';
  process: GroupProcess | null = null;
  stopReason: 'terminated' | 'timeout' | null = null;
  /** Over a limit (docs/runners.md "Limits"): the pod ends `failed` with this message. */
  failure: string | null = null;
  walls: PodWalls | null = null;
  /** Its workspace, once prepared (released by the supervisor's tear-down). */
  workspace: PreparedWorkspace | null = null;
  /** Its network walls (docs/runners.md "Network"); null without a sandbox. */
  network: PodNetwork | null = null;
  timeoutTimer: NodeJS.Timeout | null = null;
  /** What became of its work (docs/agents.md "Getting the work back"), known once the workspace is done with. */
  delivery: DeliveryReport | null = null;
  /** Resolves when a stop is requested, to end an `auto_close: false` wait. */
  stopped!: () => void;
  readonly stopRequested = new Promise<void>((resolve) => (this.stopped = resolve));
  /** Resolves once the pod has ended and its work is delivered. */
  end!: () => void;
  readonly ended = new Promise<void>((resolve) => (this.end = resolve));
  readonly results: PodResults;
  /** DROVER_TRACE_POD_PHASES=1: the timings of its start and end (./pod-phases.ts). */
  readonly phases: PodPhases;
  /** A pod prepared ahead of its slot: when its agent may start (./slot-gate.ts); null: at once. */
  readonly slot: SlotTime | null;
  constructor(
    readonly spec: PodSpec,
    workDir: string,
    readonly output: PodOutputBuffer,
    slot: SlotTime | null = null,
  ) {
    this.phases = podPhases(spec.key);
    this.slot = slot;
    this.results = new PodResults(SessionTotals.forPersistentKey(workDir, spec.persistent_key));
  }
}
