/** A ticket's page (docs/dashboard.md "Views"): its fields, its pods live with their deliveries, its merge requests, history, and "Run an agent". */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useCan, useEvents } from '../context.ts';
import { nameOf, useNames } from '../names.ts';
import { ErrorBanner, Status, formatTime, later } from '../ui.tsx';
import { DeliverySummary, MergeRequestLink } from './delivery.tsx';
import { podFromEvent } from './pods-model.ts';
import { TicketDialog } from './ticket-dialog.tsx';
import { TicketHistory } from './ticket-history.tsx';
import { upsertPod, type TicketDetail, type TicketPod } from './ticket-model.ts';
import { RunAgentForm } from './ticket-run.tsx';
import { resourceOf } from '../live.ts';
import { useNewest } from '../newest.ts';

function PodsTable({ pods }: { pods: TicketPod[] }) {
  if (pods.length === 0) return <p class="hint">No pod has worked on this ticket yet. Run an agent below.</p>;
  return (
    <div class="table-wrap">
      <table aria-label="Pods of this ticket">
        <thead>
          <tr>
            <th scope="col">Pod</th>
            <th scope="col">Status</th>
            <th scope="col">Delivery</th>
            <th scope="col" class="hide-narrow">Agent</th>
            <th scope="col" class="hide-narrow">Created</th>
          </tr>
        </thead>
        <tbody>
          {pods.map((p) => (
            <tr data-pod={p.key}>
              <td>
                <a href={`#/pods/${encodeURIComponent(p.key)}`}>{p.key}</a>
              </td>
              <td>
                <Status value={p.status} />
              </td>
              <td>
                <DeliverySummary delivery={p.delivery} />
              </td>
              <td class="hide-narrow">{p.agent_slug}</td>
              <td class="hide-narrow">{formatTime(p.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TicketPage({ slug }: { slug: string }) {
  const canWrite = useCan('tickets:write');
  const canPods = useCan('pods:write');
  const names = useNames();
  const [ticket, setTicket] = useState<TicketDetail | null>(null);
  const [pods, setPods] = useState<TicketPod[]>([]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const newest = useNewest();
  const load = () =>
    newest(api<{ ticket: TicketDetail }>('GET', `/tickets/${encodeURIComponent(slug)}`), (r) => {
      setTicket((t) => later(t, r.ticket));
      if (r.ticket.pods) setPods(r.ticket.pods);
      // A server without the ticket's `pods` may still filter pods by ticket; without either, the
      // table shows the pods started while the page is open.
      else api<{ pods: TicketPod[] }>('GET', `/pods?ticket_slug=${encodeURIComponent(slug)}&limit=20`).then((p) => setPods(p.pods), () => undefined);
    }, setError);
  useEffect(() => void load(), [slug]);
  useEvents(['ticket.', 'pod.'], (event) => {
    if (event.type === 'reset') return void load();
    const changed = resourceOf<TicketDetail>(event, 'ticket');
    if (changed?.slug === slug) return void (event.type === 'ticket.deleted' ? setError(new Error('This ticket was deleted.')) : load());
    const pod = podFromEvent(event) as (TicketPod & { ticket_slug?: string | null }) | null;
    if (pod?.ticket_slug === slug) setPods((ps) => upsertPod(ps, pod));
  });
  return (
    <section aria-labelledby="ticket-title">
      <p>
        <a href="#/board">← Board</a>
      </p>
      <div class="view-head">
        <h1 id="ticket-title" class="wrap">
          {ticket ? `${ticket.slug}: ${ticket.title}` : slug}
        </h1>
        {ticket && canWrite && (
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
      </div>
      <ErrorBanner error={error} />
      {ticket && (
        <div class="grid2">
          <div class="panel">
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <Status value={ticket.status} />
              </dd>
              <dt>Type</dt>
              <dd>{ticket.type}</dd>
              <dt>Priority</dt>
              <dd>{ticket.priority}</dd>
              <dt>Assignee</dt>
              <dd data-testid="ticket-assignee">{ticket.assignee_id === null ? 'nobody' : nameOf(names.users, ticket.assignee_id)}</dd>
              <dt>Repository</dt>
              <dd>{ticket.repository_id === null ? '—' : nameOf(names.repositories, ticket.repository_id)}</dd>
              <dt>Labels</dt>
              <dd>{ticket.labels.length ? ticket.labels.map((l) => <span class="tag label">{l}</span>) : '—'}</dd>
              {ticket.parent_slug && (
                <>
                  <dt>Parent</dt>
                  <dd>
                    <a href={`#/tickets/${encodeURIComponent(ticket.parent_slug)}`}>{ticket.parent_slug}</a>
                  </dd>
                </>
              )}
              <dt>Created</dt>
              <dd>
                {formatTime(ticket.created_at)}
                {ticket.created_by ? ` by ${ticket.created_by.name ?? ticket.created_by.type}` : ''}
              </dd>
              <dt>Updated</dt>
              <dd>
                {formatTime(ticket.updated_at)}
                {ticket.updated_by ? ` by ${ticket.updated_by.name ?? ticket.updated_by.type}` : ''}
              </dd>
            </dl>
          </div>
          <div class="panel">
            <h2>Description</h2>
            <p class="content">{ticket.description || <span class="hint">No description.</span>}</p>
          </div>
        </div>
      )}
      <section class="panel" aria-labelledby="ticket-pods">
        <h2 id="ticket-pods">Pods</h2>
        <PodsTable pods={pods} />
        {ticket?.merge_requests && ticket.merge_requests.length > 0 && (
          <>
            <h3>Merge requests</h3>
            <ul>
              {ticket.merge_requests.map((mr) => (
                <li>
                  <MergeRequestLink mr={mr} /> {mr.branch && <code>{mr.branch}</code>}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
      {ticket && canPods && <RunAgentForm ticket={ticket} />}
      <TicketHistory slug={slug} />
      {editing && ticket && (
        <TicketDialog
          slug={slug}
          canWrite={canWrite}
          onClose={() => setEditing(false)}
          onSaved={(t) => {
            setEditing(false);
            if (t) void load();
            else location.hash = '/board';
          }}
        />
      )}
    </section>
  );
}
