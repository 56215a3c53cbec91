/**
 * Pods that spawn pods (docs/mcp.md). A pod's token holds `pods:write` only for its own children:
 * it creates pods that record it as `parent_pod_key`, and terminates only those. A child is at
 * most MAX_SPAWN_DEPTH levels below a pod created through the API (or by a loop); a pod has at most
 * MAX_ACTIVE_CHILDREN active children; a child inherits its parent's channel and ticket unless it
 * is given its own; when a pod ends, its still-active children are terminated (lifecycle.ts).
 */
import { AppError, notFound } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import * as pods from '../../store/pods.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { Principal } from '../auth/authenticate.ts';

export const MAX_SPAWN_DEPTH = 3;
export const MAX_ACTIVE_CHILDREN = 10;

/** How many levels `pod` is below a pod created through the API (0 for such a pod), counting at most up to `limit`. */
async function depthOf(db: Executor, orgId: number, pod: PodRow, limit: number): Promise<number> {
  let depth = 0;
  let current: PodRow | undefined = pod;
  while (current?.parent_pod_key && depth < limit) {
    depth++;
    current = await pods.findPod(db, orgId, current.parent_pod_key);
  }
  return depth;
}

/**
 * The pod a pod token spawns under, or null for an API key. Refuses a parent already at the
 * deepest level (409 SPAWN_DEPTH_EXCEEDED). The fan-out limit is checked where the child is
 * recorded (checkFanOut), under the organization's placement lock.
 */
export async function spawningParent(db: Executor, principal: Principal): Promise<PodRow | null> {
  if (principal.kind !== 'pod') return null;
  const parent = await pods.findPod(db, principal.org.id, principal.podKey);
  if (!parent) throw notFound('pod');
  const depth = await depthOf(db, principal.org.id, parent, MAX_SPAWN_DEPTH);
  if (depth >= MAX_SPAWN_DEPTH) {
    throw new AppError(
      'SPAWN_DEPTH_EXCEEDED',
      `pod ${parent.key} is ${depth} levels below a pod created through the API; spawned pods may go at most ${MAX_SPAWN_DEPTH} levels deep`,
    );
  }
  return parent;
}

/** 409 TOO_MANY_CHILDREN when `parentKey` already has MAX_ACTIVE_CHILDREN active children (`pending` more are being recorded with this one). */
export async function checkFanOut(db: Executor, parentKey: string, pending: number): Promise<AppError | null> {
  const active = (await pods.countActiveChildPods(db, parentKey)) + pending;
  if (active < MAX_ACTIVE_CHILDREN) return null;
  return new AppError('TOO_MANY_CHILDREN', `pod ${parentKey} already has ${active} active child pods (at most ${MAX_ACTIVE_CHILDREN}); wait for one to end or terminate one`);
}

/** A pod token terminates only the pods it spawned (403 otherwise); an API key with pods:write, any pod. */
export function checkMayTerminate(principal: Principal, pod: PodRow): void {
  if (principal.kind !== 'pod' || pod.parent_pod_key === principal.podKey) return;
  throw new AppError('INSUFFICIENT_SCOPE', `a pod token may terminate only the pods its own pod spawned; ${pod.key} is not one of them`, { required_scopes: ['pods:write'] });
}
