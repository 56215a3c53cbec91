/**
 * The signed-in session: the organization and the API key, kept in sessionStorage only (
 * docs/dashboard.md), so closing the tab forgets the key; never in localStorage, a cookie or the URL.
 */
const STORAGE_KEY = 'drover.session';

export interface Session {
  org: string;
  key: string;
}

export function loadSession(): Session | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return value && typeof value.org === 'string' && typeof value.key === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
