import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { EventHub, DroverEvent } from './live.ts';
import type { Scope } from './scopes.ts';
import type { Session } from './session.ts';

export interface AppState {
  session: Session;
  scopes: Set<Scope>;
  hub: EventHub;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('outside the signed-in app');
  return state;
}

export function useCan(scope: Scope): boolean {
  return useApp().scopes.has(scope);
}

/** Calls `handler` for every event whose type starts with one of `prefixes` (`ticket.`, `pod.updated`). */
export function useEvents(prefixes: string[], handler: (event: DroverEvent) => void): void {
  const { hub } = useApp();
  const latest = useRef(handler);
  latest.current = handler;
  const key = prefixes.join(',');
  useEffect(
    () => hub.on((event) => {
      if (event.type === 'reset' || prefixes.some((p) => event.type.startsWith(p))) latest.current(event);
    }),
    [hub, key],
  );
}

/** The current location's fragment (`#/pods/KEY` → `/pods/KEY`), updated on navigation. */
export function useRoute(): string {
  const read = () => (location.hash.replace(/^#/, '') || '/board').split('?')[0];
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export const navigate = (path: string) => {
  location.hash = path;
};
