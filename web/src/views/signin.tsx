import { useState } from 'preact/hooks';
import { fetchScopes, type Scope } from '../scopes.ts';
import type { Session } from '../session.ts';
import { ErrorBanner } from '../ui.tsx';

/** Sign-in: the organization and a pasted API key, checked against the API before it is kept. */
export function SignIn(props: { error: unknown; onSignedIn: (session: Session, scopes: Set<Scope>) => void }) {
  const [org, setOrg] = useState('default');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(props.error);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const session = { org: org.trim(), key: key.trim() };
    try {
      props.onSignedIn(session, await fetchScopes(session));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Drover</h1>
      <form onSubmit={submit}>
        <label>
          Organization
          <input name="org" value={org} onInput={(e) => setOrg(e.currentTarget.value)} required autocomplete="organization" />
        </label>
        <label>
          API key
          <input name="api-key" type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} required autocomplete="off" placeholder="drv_…" />
        </label>
        <p class="hint">The key is kept in this tab's session storage only and sent to this server alone.</p>
        <ErrorBanner error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
