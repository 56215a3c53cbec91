import { ApiError, api } from './api.ts';
import type { Session } from './session.ts';

export const SCOPES = [
  'tickets:read', 'tickets:write', 'pods:read', 'pods:write', 'loops:read', 'loops:write',
  'channels:read', 'channels:write', 'runners:read', 'repos:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What the key may do, learnt without changing anything: the API checks the scope (403 with
 * `required_scopes`) before the body (400), so a read of one item and a create with an empty body
 * tell each scope apart. A 401 or 404 (unknown key or organization) fails the sign-in.
 */
const PROBES: Record<Scope, [string, string]> = {
  'tickets:read': ['GET', '/tickets?limit=1'],
  'tickets:write': ['POST', '/tickets'],
  'pods:read': ['GET', '/pods?limit=1'],
  'pods:write': ['POST', '/pods'],
  'loops:read': ['GET', '/loops?limit=1'],
  'loops:write': ['POST', '/loops'],
  'channels:read': ['GET', '/channels?limit=1'],
  'channels:write': ['POST', '/channels'],
  'runners:read': ['GET', '/runners'],
  'repos:read': ['GET', '/repositories?limit=1'],
};

export async function probeScopes(session: Session): Promise<Set<Scope>> {
  const results = await Promise.all(
    SCOPES.map(async (scope) => {
      const [method, path] = PROBES[scope];
      try {
        await api(method, path, method === 'POST' ? {} : undefined, session);
        return scope;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.status === 401 || (error.status === 404 && error.code === 'NOT_FOUND' && method === 'GET')) throw error;
        if (error.status === 403) return null;
        return scope; // 400: allowed, the empty body was refused after the scope check
      }
    }),
  );
  return new Set(results.filter((s): s is Scope => s !== null));
}

export const scopeReason = (scope: Scope) => `Your API key lacks the ${scope} scope.`;
