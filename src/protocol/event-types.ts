import type { Scope } from './scopes.ts';

/** The event types of docs/events.md and the scope that lets a key receive each. */
export const EVENT_SCOPES = {
  'ticket.created': 'tickets:read',
  'ticket.updated': 'tickets:read',
  'ticket.deleted': 'tickets:read',
  'channel.created': 'channels:read',
  'channel.updated': 'channels:read',
  'message.created': 'channels:read',
  'pod.created': 'pods:read',
  'pod.updated': 'pods:read',
  'loop.created': 'loops:read',
  'loop.updated': 'loops:read',
  'loop.deleted': 'loops:read',
  'run.created': 'loops:read',
  'run.updated': 'loops:read',
  'runner.updated': 'runners:read',
} as const satisfies Record<string, Scope>;

export type EventType = keyof typeof EVENT_SCOPES;
export const EVENT_TYPES = Object.keys(EVENT_SCOPES) as EventType[];

export const isEventType = (value: string): value is EventType => Object.hasOwn(EVENT_SCOPES, value);

/** The families `types` may name with `.*` (`pod.*`: every `pod.` type). */
export const EVENT_FAMILIES = [...new Set(EVENT_TYPES.map((type) => type.split('.')[0]))];

/** What the stream's filters compare; an event carries those that concern it. */
export interface EventSubjects {
  channel_id?: number | null;
  pod_key?: string | null;
  loop_slug?: string | null;
  ticket_slug?: string | null;
}

/** The `types` a query names, expanded (`pod.*`); the names it does not know in `unknown`. */
export function expandTypes(names: readonly string[]): { types: EventType[]; unknown: string[] } {
  const types = new Set<EventType>();
  const unknown: string[] = [];
  for (const name of names) {
    if (isEventType(name)) types.add(name);
    else if (name.endsWith('.*') && EVENT_FAMILIES.includes(name.slice(0, -2))) {
      for (const type of EVENT_TYPES) if (type.startsWith(name.slice(0, -1))) types.add(type);
    } else unknown.push(name);
  }
  return { types: [...types], unknown };
}
