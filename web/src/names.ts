/**
 * Names instead of ids (docs/dashboard.md "Names, not ids"): the org's people (`GET /users`),
 * runners and repositories, read once per sign-in and shared by every view. A list the server does
 * not have (yet) or the key may not read is simply empty: the views then show the id.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import { useApp } from './context.ts';
import type { Session } from './session.ts';

export interface Named {
  id: number;
  name: string;
}

export interface Names {
  users: Named[];
  /** `GET /users` answered: people are picked from `users` (maybe none), never typed as ids. */
  usersListed: boolean;
  runners: Named[];
  repositories: Named[];
}

const EMPTY: Names = { users: [], usersListed: false, runners: [], repositories: [] };
let cached: { session: Session; names: Promise<Names> } | null = null;

/** The list, or null when the server does not answer it (no such endpoint, or the key may not read it). */
const list = (path: string, field: string): Promise<Named[] | null> =>
  api<Record<string, Named[]>>('GET', path).then(
    (r) => (Array.isArray(r[field]) ? r[field].map((x) => ({ id: x.id, name: x.name })) : null),
    () => null,
  );

function load(session: Session): Promise<Names> {
  if (cached?.session !== session) {
    cached = {
      session,
      names: Promise.all([list('/users', 'users'), list('/runners', 'runners'), list('/repositories', 'repositories')]).then(([users, runners, repositories]) => ({
        users: users ?? [],
        usersListed: users !== null,
        runners: runners ?? [],
        repositories: repositories ?? [],
      })),
    };
  }
  return cached.names;
}

/** Forgets the names read (after one was added), so the next view reads them again. */
export const forgetNames = () => void (cached = null);

export function useNames(): Names {
  const { session } = useApp();
  const [names, setNames] = useState<Names>(EMPTY);
  useEffect(() => {
    let live = true;
    void load(session).then((n) => live && setNames(n));
    return () => void (live = false);
  }, [session]);
  return names;
}

/** The name for an id in a list, else `#id`; `—` for none. */
export function nameOf(list: Named[], id: number | null | undefined): string {
  if (id === null || id === undefined) return '—';
  return list.find((x) => x.id === id)?.name ?? `#${id}`;
}
