import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { ApiError } from './api.ts';
import type { Named } from './names.ts';

export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? `${error.message}${error.code && error.code !== 'HTTP_ERROR' ? ` (${error.code})` : ''}` : String((error as Error).message ?? error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Status({ value }: { value: string }) {
  return <span class={`status status-${value}`}>{value.replace(/_/g, ' ')}</span>;
}

/** A button that is disabled, with the reason as its description, when `allowed` is false. */
export function Guarded(props: { allowed: boolean; reason: string; onClick?: () => void; children: ComponentChildren; type?: 'button' | 'submit'; class?: string; busy?: boolean }) {
  return (
    <button type={props.type ?? 'button'} class={props.class} disabled={!props.allowed || props.busy} title={props.allowed ? undefined : props.reason} onClick={props.onClick}>
      {props.children}
      {!props.allowed && <span class="visually-hidden"> ({props.reason})</span>}
    </button>
  );
}

/** A modal dialog (the platform's <dialog>): focus stays inside, Escape closes it. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    if (!dialog.open) dialog.showModal();
    const close = () => props.onClose();
    dialog.addEventListener('close', close);
    return () => dialog.removeEventListener('close', close);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title">
      <div class="dialog-head">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" class="plain" aria-label="Close" onClick={() => ref.current?.close()}>
          ×
        </button>
      </div>
      {props.children}
    </dialog>
  );
}

export const formatTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export const formatCost = (usd: number | null | undefined) => (usd === null || usd === undefined ? '—' : `$${usd.toFixed(usd < 1 ? 4 : 2)}`);

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Parses a JSON object typed into a textarea; empty is `{}`. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * The later of two versions of a resource, by `updated_at`: an answer that left the server before
 * an event already applied must not put the older state back.
 */
export function later<T extends { updated_at?: string }>(current: T | null | undefined, incoming: T): T {
  if (current?.updated_at && incoming.updated_at && current.updated_at > incoming.updated_at) return current;
  return current ? { ...current, ...incoming } : incoming;
}

/**
 * A person picked by name (the org's users); the value is the user id as text, '' for none. Without
 * a list of people (a server without `GET /users`), the id is typed.
 */
/** A person picked by name; an id is typed only where the server lists no people (docs/dashboard.md "Names, not ids"). */
export function AssigneePicker(props: { users: Named[]; listed: boolean; value: string; onChange: (id: string) => void; empty: string; disabled?: boolean; name?: string }) {
  if (!props.listed) {
    return <input name={props.name} inputMode="numeric" placeholder="user id" value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.value)} />;
  }
  return (
    <select name={props.name} value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value="">{props.empty}</option>
      {props.users.map((u) => (
        <option value={String(u.id)}>{u.name}</option>
      ))}
    </select>
  );
}
