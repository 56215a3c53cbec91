import { AsyncLocalStorage } from 'node:async_hooks';

import { ACTOR_TYPES, type ActorType } from '../protocol/enums.ts';

export { ACTOR_TYPES, type ActorType };

/**
 * Who made a change (docs/api.md "Actors and activity"; it lives with the event log, which records it on every event): a person (through a key of theirs), a key
 * of no one, a pod (its token, or a pod it spawned), a loop (its schedule), the admin token, or the
 * server itself (timeouts, runner reports, retention). `id` is the user's or key's integer id, the
 * pod's key or the loop's slug; null for admin and system. `name` is as it was at the time.
 */
export interface Actor {
  type: ActorType;
  id: number | string | null;
  name: string;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, name: 'system' };
export const ADMIN_ACTOR: Actor = { type: 'admin', id: null, name: 'admin' };

/*
 * The actor of the work in progress. Every entry point sets it once (an HTTP request from its
 * credential, the scheduler for a cron slot, a pod's spawn), so the many domain functions between
 * it and the rows they write need not pass it along; whatever runs outside any of them is `system`.
 */
const current = new AsyncLocalStorage<Actor>();

export function actingAs<T>(actor: Actor, work: () => T): T {
  return current.run(actor, work);
}

export function currentActor(): Actor {
  return current.getStore() ?? SYSTEM_ACTOR;
}

/** The JSON stored in `created_by`, `updated_by`, `triggered_by`, `sender` and `events.actor`. */
export function actorJson(actor: Actor = currentActor()): string {
  return JSON.stringify(actor);
}

/** A stored actor column as the API shows it (null for rows older than actors). */
export function parseActor(stored: string | null): Actor | null {
  if (stored === null) return null;
  return JSON.parse(stored) as Actor;
}

export const podActor = (podKey: string): Actor => ({ type: 'pod', id: podKey, name: podKey });

/** A loop's schedule, what starts its cron runs: the loop, named with its cron expression. */
export const scheduleActor = (loop: { slug: string; name: string; cron_expression: string | null }): Actor => ({
  type: 'loop',
  id: loop.slug,
  name: loop.cron_expression === null ? loop.name : `${loop.name} (cron ${loop.cron_expression})`,
});
