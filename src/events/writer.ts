import type { Executor, Store } from '../store/db.ts';
import { appendEvent } from '../store/events.ts';
import { channelOf } from '../store/notifications.ts';
import { actorJson, currentActor } from './actor.ts';
import type { EventSubjects, EventType } from '../protocol/event-types.ts';

/** What writing an event needs from the domain's context. */
export interface EventWriterContext {
  readonly store: Store;
  readonly now: () => number;
  /**
   * One process (SQLite): wakes this process's hub. Called inside the transaction; the hub's read
   * waits for the one connection, so it sees the event once committed, or nothing if rolled back.
   */
  readonly eventsWritten?: (orgId: number) => void;
}


/**
 * Records one change in the event log, in the transaction `trx` that makes the change: committed
 * with it, or gone with it. `resource` is the resource as the API shows it; the event's `data`
 * holds it under its name, as the API's single-resource answers do (`{"ticket": {…}}`,
 * `{"pod": {…}}`, `{"run": {…}}`: the type's first word).
 */
export async function recordEvent(
  ctx: EventWriterContext,
  trx: Executor,
  orgId: number,
  type: EventType,
  resource: unknown,
  subjects: EventSubjects = {},
): Promise<number> {
  return recordEventData(ctx, trx, orgId, type, eventData(type, resource), subjects);
}

/** An event's `data` as JSON: the resource under its name, which is also the API's answer with it. */
export const eventData = (type: EventType, resource: unknown): string => JSON.stringify({ [type.slice(0, type.indexOf('.'))]: resource });

/** recordEvent with the event's `data` already serialized (eventData), for a caller that answers with the same JSON. */
export async function recordEventData(
  ctx: EventWriterContext,
  trx: Executor,
  orgId: number,
  type: EventType,
  data: string,
  subjects: EventSubjects = {},
): Promise<number> {
  const actor = currentActor();
  const id = await appendEvent(
    trx,
    {
      org_id: orgId,
      type,
      channel_id: subjects.channel_id ?? null,
      pod_key: subjects.pod_key ?? null,
      loop_slug: subjects.loop_slug ?? null,
      ticket_slug: subjects.ticket_slug ?? null,
      payload: data,
      actor: actorJson(actor),
      actor_type: actor.type,
      created_at: ctx.now(),
    },
    channelOf(ctx.store, 'events'),
  );
  ctx.eventsWritten?.(orgId);
  return id;
}
