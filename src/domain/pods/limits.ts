/**
 * A pod's resource limits (docs/runners.md "Limits"): what its agentfile asks for with
 * `CONFIG memory_mb | pids | cpus | disk_mb`. A limit not asked for is null: the runner's
 * operator default applies, and a value over the operator's maximum is lowered to it there.
 */
import type { PodLimitsRequest } from '../../protocol/runner-link.ts';
import { fail, show } from './agentfile-syntax.ts';

export type { PodLimitsRequest } from '../../protocol/runner-link.ts';

export const LIMIT_KEYS = ['memory_mb', 'pids', 'cpus', 'disk_mb'] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];

/** The bounds an agentfile may ask for; the runner's operator narrows them further. */
export const LIMIT_BOUNDS: Record<LimitKey, { min: number; max: number }> = {
  memory_mb: { min: 64, max: 1_048_576 },
  pids: { min: 16, max: 1_000_000 },
  cpus: { min: 0.01, max: 1024 },
  disk_mb: { min: 1, max: 16_777_216 },
};

export const isLimitKey = (key: string): key is LimitKey => (LIMIT_KEYS as readonly string[]).includes(key);

/** `CONFIG <limit> = <value>`: whole numbers, cpus with up to two decimals (0.5 = half a core). */
export function parseLimit(key: LimitKey, raw: string, lineNo: number): number {
  const what = `CONFIG ${key}`;
  const pattern = key === 'cpus' ? /^[0-9]+(\.[0-9]{1,2})?$/ : /^[0-9]+$/;
  if (!pattern.test(raw)) fail(lineNo, `${what} must be ${key === 'cpus' ? 'a number such as 2 or 0.5' : 'a whole number'}, got ${show(raw)}`);
  const n = Number(raw);
  const { min, max } = LIMIT_BOUNDS[key];
  if (!(n >= min && n <= max)) fail(lineNo, `${what} must be between ${min} and ${max}, got ${show(raw)}`);
  return n;
}

export function limitsRequest(config: Partial<Record<LimitKey, number>>): PodLimitsRequest {
  return { memory_mb: config.memory_mb ?? null, pids: config.pids ?? null, cpus: config.cpus ?? null, disk_mb: config.disk_mb ?? null };
}
