/**
 * The runner operator's pod limits (docs/runners.md "Limits"): each value is both the default of
 * a pod that asks for nothing and the most a pod gets (a pod asking for more gets this).
 */
import type { PodLimitsRequest } from '../../protocol/runner-link.ts';

export interface PodLimits {
  memory_mb: number;
  pids: number;
  /** null: no CPU limit. */
  cpus: number | null;
  disk_mb: number;
}

export const DEFAULT_POD_LIMITS: PodLimits = { memory_mb: 4096, pids: 1024, cpus: null, disk_mb: 20_480 };

/** The limits one pod runs with: what it asked for, within the operator's values. */
export function effectiveLimits(operator: PodLimits, request: PodLimitsRequest | undefined): PodLimits {
  const within = (asked: number | null | undefined, most: number): number => (asked == null ? most : Math.min(asked, most));
  return {
    memory_mb: within(request?.memory_mb, operator.memory_mb),
    pids: within(request?.pids, operator.pids),
    cpus: request?.cpus == null ? operator.cpus : operator.cpus === null ? request.cpus : Math.min(request.cpus, operator.cpus),
    disk_mb: within(request?.disk_mb, operator.disk_mb),
  };
}

/**
 * The operator's values from flags, then the environment (`DROVER_RUNNER_POD_*`, for the local
 * runner `DROVER_LOCAL_RUNNER_POD_*`), then the defaults. A bad value is an error naming it.
 */
export function operatorLimits(values: Partial<Record<keyof PodLimits, string | undefined>>): PodLimits {
  const number = (name: keyof PodLimits, raw: string | undefined, fallback: number | null, decimals: boolean): number | null => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0 || (!decimals && !Number.isInteger(n))) throw new Error(`the pod ${name.replace('_', ' ')} limit must be a positive ${decimals ? 'number' : 'whole number'}, got "${raw}"`);
    return n;
  };
  return {
    memory_mb: number('memory_mb', values.memory_mb, DEFAULT_POD_LIMITS.memory_mb, false)!,
    pids: number('pids', values.pids, DEFAULT_POD_LIMITS.pids, false)!,
    cpus: number('cpus', values.cpus, DEFAULT_POD_LIMITS.cpus, true),
    disk_mb: number('disk_mb', values.disk_mb, DEFAULT_POD_LIMITS.disk_mb, false)!,
  };
}
