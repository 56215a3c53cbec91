import { api } from './api.ts';
import type { Session } from './session.ts';

import { SCOPES, grants, type Scope } from '../../src/protocol/scopes.ts';

export type { Scope };

/**
 * What the key may do: `GET /auth/whoami` answers its scopes (a write scope also grants reading,
 * as the API does). A 401 or 404 (unknown key or organization) fails the sign-in.
 */
export async function fetchScopes(session: Session): Promise<Set<Scope>> {
  const { principal } = (await api('GET', '/auth/whoami', undefined, session)) as { principal: { scopes: string[] } };
  const held = new Set(principal.scopes);
  return new Set(SCOPES.filter((scope) => grants([...held], scope)));
}

export const scopeReason = (scope: Scope) => `Your API key lacks the ${scope} scope.`;
