import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import './style.css';
import { prefetch, useSessionForApi } from './api.ts';
import { AppContext, useRoute, type AppState } from './context.ts';
import { EventHub, type LiveState } from './live.ts';
import { fetchScopes, type Scope } from './scopes.ts';
import { clearSession, loadSession, saveSession, type Session } from './session.ts';
import { ErrorBanner } from './ui.tsx';
import { SignIn } from './views/signin.tsx';
import { BoardView } from './views/board.tsx';
import { PodsView } from './views/pods.tsx';
import { PodPage } from './views/pod.tsx';
import { PAGE as TRANSCRIPT_FIRST } from './views/transcript.tsx';
import { openingRead } from './transcript-feed.ts';
import { LoopsView } from './views/loops.tsx';
import { LoopPage } from './views/loop.tsx';
import { RunPage } from './views/run.tsx';
import { ChannelsView } from './views/channels.tsx';
import { ChannelPage } from './views/channel.tsx';
import { RunnersView, RunnerPage } from './views/runners.tsx';
import { TicketPage } from './views/ticket-page.tsx';
import { UsageView } from './views/usage.tsx';

const NAV: Array<{ path: string; label: string; scope: Scope; hidden?: boolean }> = [
  { path: '/board', label: 'Board', scope: 'tickets:read' },
  { path: '/tickets', label: 'Tickets', scope: 'tickets:read', hidden: true },
  { path: '/pods', label: 'Pods', scope: 'pods:read' },
  { path: '/loops', label: 'Loops', scope: 'loops:read' },
  { path: '/channels', label: 'Channels', scope: 'channels:read' },
  { path: '/runners', label: 'Runners', scope: 'runners:read' },
  { path: '/usage', label: 'Usage', scope: 'pods:read' },
];

function View({ route, scopes }: { route: string; scopes: Set<Scope> }) {
  const parts = route.split('/').filter(Boolean).map(decodeURIComponent);
  const [section] = parts;
  const nav = NAV.find((n) => n.path === `/${section}`);
  if (!nav) return <p>No such view. Choose one above.</p>;
  if (!scopes.has(nav.scope)) return <p role="alert">Your API key lacks the {nav.scope} scope, so the {nav.label} view is not available.</p>;
  switch (section) {
    case 'board':
      return <BoardView />;
    case 'tickets':
      return parts[1] ? <TicketPage slug={parts[1]} /> : <BoardView />;
    case 'usage':
      return <UsageView />;
    case 'pods':
      return parts[1] ? <PodPage podKey={parts[1]} /> : <PodsView />;
    case 'loops':
      if (parts[1] && parts[2] === 'runs' && parts[3]) return <RunPage slug={parts[1]} runId={Number(parts[3])} />;
      return parts[1] ? <LoopPage slug={parts[1]} /> : <LoopsView />;
    case 'channels':
      return parts[1] ? <ChannelPage id={Number(parts[1])} /> : <ChannelsView />;
    default:
      return parts[1] ? <RunnerPage id={Number(parts[1])} /> : <RunnersView />;
  }
}

function useLiveState(hub: EventHub): LiveState {
  const [state, setState] = useState<LiveState>(hub.state);
  useEffect(() => {
    const off = hub.onState((s) => setState(s));
    setState(hub.state); // it may have changed between the render and this subscription
    return off;
  }, [hub]);
  return state;
}

function LiveBadge({ hub, state }: { hub: EventHub; state: LiveState }) {
  const text = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', unavailable: 'Not live' }[state];
  return (
    <span class={`live live-${state}`} role="status" title={state === 'unavailable' ? hub.why : undefined}>
      {text}
    </span>
  );
}

function Shell({ state, onSignOut }: { state: AppState; onSignOut: () => void }) {
  const route = useRoute();
  const section = route.split('/')[1];
  const live = useLiveState(state.hub);
  // While the stream reconnects, what is on screen may have changed on the server: say so.
  const stale = live === 'reconnecting';
  return (
    <AppContext.Provider value={state}>
      <header class="top">
        <a class="brand" href="#/board">
          Drover
        </a>
        <nav aria-label="Views">
          {NAV.filter((n) => !n.hidden && state.scopes.has(n.scope)).map((n) => (
            <a href={`#${n.path}`} aria-current={`/${section}` === n.path ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <span class="org">{state.session.org}</span>
        <LiveBadge hub={state.hub} state={live} />
        <button type="button" class="plain" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" data-stale={stale ? 'true' : undefined} class={stale ? 'stale' : undefined}>
        {stale && (
          <p class="stale-note" role="status">
            Reconnecting to the server: what you see may be out of date.
          </p>
        )}
        <View key={route} route={route} scopes={state.scopes} />
      </main>
    </AppContext.Provider>
  );
}

// A tab that is signed in already asks what its key may do before the first render, not after it,
// and meanwhile what its page reads first (docs/dashboard.md "Loading a page").
const stored = loadSession();
const storedScopes = stored ? fetchScopes(stored) : null;
const podRoute = /^#\/pods\/([^/]+)$/.exec(location.hash);
if (stored && podRoute) {
  const key = decodeURIComponent(podRoute[1]);
  prefetch(stored, [`/pods/${encodeURIComponent(key)}`, openingRead(key, TRANSCRIPT_FIRST)]);
}

function App() {
  const [session, setSession] = useState<Session | null>(stored);
  const [scopes, setScopes] = useState<Set<Scope> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const signOut = () => {
    clearSession();
    setSession(null);
    setScopes(null);
  };
  useSessionForApi(session, signOut);
  useEffect(() => {
    if (!session || scopes) return;
    (session === stored && storedScopes ? storedScopes : fetchScopes(session)).then(setScopes, (e) => {
      setError(e);
      signOut();
    });
  }, [session]);
  const hub = useMemo(() => (session && scopes ? new EventHub(session) : null), [session, scopes]);
  useEffect(() => () => hub?.close(), [hub]);

  if (!session) {
    return (
      <SignIn
        error={error}
        onSignedIn={(s, granted) => {
          saveSession(s);
          setError(null);
          setScopes(granted);
          setSession(s);
          if (!location.hash) location.hash = '/board';
        }}
      />
    );
  }
  if (!scopes || !hub) return <p class="loading">{error ? <ErrorBanner error={error} /> : 'Signing in…'}</p>;
  return <Shell state={{ session, scopes, hub }} onSignOut={signOut} />;
}

render(<App />, document.getElementById('app')!);
