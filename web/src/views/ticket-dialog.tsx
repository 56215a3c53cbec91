import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { scopeReason } from '../scopes.ts';
import { useNames } from '../names.ts';
import { AssigneePicker, Dialog, ErrorBanner, Guarded, formatTime } from '../ui.tsx';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../../../src/protocol/enums.ts';
import { STATUS_LABELS, type Ticket } from './tickets-model.ts';

interface Draft {
  type: string;
  title: string;
  description: string;
  priority: string;
  status: string;
  labels: string;
  assignee: string;
}

const blank: Draft = { type: 'task', title: '', description: '', priority: 'medium', status: 'backlog', labels: '', assignee: '' };

/** Create a ticket (slug null) or show and edit one. */
export function TicketDialog(props: { slug: string | null; canWrite: boolean; onClose: () => void; onSaved: (ticket: Ticket | null) => void }) {
  const names = useNames();
  const [draft, setDraft] = useState<Draft>(blank);
  const [ticket, setTicket] = useState<Ticket | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!props.slug) return;
    api<{ ticket: Ticket }>('GET', `/tickets/${encodeURIComponent(props.slug)}`).then(({ ticket: t }) => {
      setTicket(t);
      setDraft({ type: t.type, title: t.title, description: t.description ?? '', priority: t.priority, status: t.status, labels: t.labels.join(', '), assignee: t.assignee_id === null ? '' : String(t.assignee_id) });
    }, setError);
  }, [props.slug]);
  const field = (name: keyof Draft) => ({ value: draft[name], onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value }), disabled: !props.canWrite });
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const labels = draft.labels.split(',').map((l) => l.trim()).filter(Boolean);
    const assignee = draft.assignee.trim() ? Number(draft.assignee.trim()) : null;
    try {
      let saved: { ticket: Ticket };
      if (props.slug) {
        saved = await api('PUT', `/tickets/${encodeURIComponent(props.slug)}`, { type: draft.type, title: draft.title, description: draft.description || null, priority: draft.priority, status: draft.status, labels, assignee_id: assignee });
      } else {
        saved = await api('POST', '/tickets', { type: draft.type, title: draft.title, ...(draft.description ? { description: draft.description } : {}), priority: draft.priority, status: draft.status, labels, ...(assignee !== null ? { assignee_id: assignee } : {}) });
      }
      props.onSaved(saved.ticket);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!props.slug || !confirm(`Delete ${props.slug}?`)) return;
    try {
      await api('DELETE', `/tickets/${encodeURIComponent(props.slug)}`);
      props.onSaved(null);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Dialog title={props.slug ? `Ticket ${props.slug}` : 'New ticket'} onClose={props.onClose}>
      <form class="stack" onSubmit={submit}>
        <label>
          Title
          <input required maxLength={500} {...field('title')} />
        </label>
        <div class="row">
          <label>
            Type
            <select {...field('type')}>
              {TICKET_TYPES.map((t) => (
                <option value={t}>{t}</option>
              ))}
            </select>
          </label>
          <label>
            Priority
            <select {...field('priority')}>
              {TICKET_PRIORITIES.map((p) => (
                <option value={p}>{p}</option>
              ))}
            </select>
          </label>
          <label>
            Status
            <select {...field('status')}>
              {TICKET_STATUSES.map((s) => (
                <option value={s}>{STATUS_LABELS[s]}</option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Description
          <textarea rows={6} {...field('description')} />
        </label>
        <div class="row">
          <label>
            Labels (comma-separated)
            <input {...field('labels')} />
          </label>
          <label>
            Assignee
            <AssigneePicker users={names.users} listed={names.usersListed} value={draft.assignee} onChange={(assignee) => setDraft({ ...draft, assignee })} empty="Nobody" disabled={!props.canWrite} />
          </label>
        </div>
        {ticket && (
          <p class="hint">
            Created {formatTime(ticket.created_at)} · updated {formatTime(ticket.updated_at)}
            {ticket.parent_slug ? ` · parent ${ticket.parent_slug}` : ''}
          </p>
        )}
        <ErrorBanner error={error} />
        <div class="row actions">
          <Guarded type="submit" allowed={props.canWrite} reason={scopeReason('tickets:write')} busy={busy}>
            {props.slug ? 'Save' : 'Create ticket'}
          </Guarded>
          {props.slug && props.canWrite && (
            <button type="button" class="danger" onClick={remove}>
              Delete
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
