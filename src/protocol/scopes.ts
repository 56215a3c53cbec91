export const SCOPES = [
  'pods:read',
  'pods:write',
  'tickets:read',
  'tickets:write',
  'channels:read',
  'channels:write',
  'runners:read',
  'repos:read',
  'loops:read',
  'loops:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** A `:write` scope implies the `:read` scope of the same resource. */
export function grants(held: readonly string[], required: Scope): boolean {
  if (held.includes(required)) return true;
  if (required.endsWith(':read')) return held.includes(required.replace(/:read$/, ':write'));
  return false;
}
