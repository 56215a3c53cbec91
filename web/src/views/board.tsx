import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { useApp, useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { nameOf, useNames } from '../names.ts';
import { AssigneePicker, ErrorBanner } from '../ui.tsx';
import { TICKET_STATUSES, TICKET_TYPES } from '../../../src/protocol/enums.ts';
import { TicketDialog } from './ticket-dialog.tsx';
import { useNewest } from '../newest.ts';
import {
  STATUS_LABELS, emptyColumns, hasFilters, matches, placeTicket, statusOf, byBoardOrder,
  type Card, type Columns, type Filters, type Ticket, type TicketStatus,
} from './tickets-model.ts';

const PER_COLUMN = 100;

async function loadColumns(filters: Filters): Promise<Columns> {
  const columns = emptyColumns();
  if (!hasFilters(filters)) {
    const { board } = await api<{ board: { columns: Array<{ status: TicketStatus; total: number; tickets: Omit<Card, 'status'>[] }> } }>('GET', `/tickets/board?limit_per_column=${PER_COLUMN}`);
    for (const column of board.columns) columns[column.status] = { total: column.total, cards: column.tickets.map((t) => ({ ...t, status: column.status })) };
    return columns;
  }
  // Filtered: the ticket list, per status (the board endpoint has no filters).
  await Promise.all(
    TICKET_STATUSES.map(async (status) => {
      const q = query({ status, labels: filters.label.trim(), type: filters.type, assignee_id: filters.assignee.trim(), limit: PER_COLUMN });
      const page = await api<{ tickets: Card[]; total: number }>('GET', `/tickets${q}`);
      columns[status] = { total: page.total, cards: page.tickets.sort(byBoardOrder) };
    }),
  );
  return columns;
}

export function BoardView() {
  const { scopes } = useApp();
  const canWrite = useCan('tickets:write');
  const names = useNames();
  const [filters, setFilters] = useState<Filters>({ label: '', type: '', assignee: '' });
  const [columns, setColumns] = useState<Columns>(emptyColumns);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [picked, setPicked] = useState<{ slug: string; target: number } | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [dropTarget, setDropTarget] = useState<TicketStatus | null>(null);
  const columnsRef = useRef(columns);
  columnsRef.current = columns;

  const newest = useNewest();
  const reload = (f = filters) =>
    newest(
      loadColumns(f),
      (c) => {
        setColumns(c);
        setLoaded(true);
        setError(null);
      },
      setError,
    );
  useEffect(() => void reload(), []);

  useEvents(['ticket.'], (event) => {
    if (event.type === 'reset') return void reload();
    const ticket = resourceOf<Ticket>(event, 'ticket');
    const slug = ticket?.slug;
    if (!slug) return;
    setColumns((current) => {
      const previous = statusOf(current, slug);
      if (event.type === 'ticket.deleted' || !ticket) return placeTicket(current, null, slug, previous);
      return placeTicket(current, matches(ticket, filters) ? ticket : null, slug, previous);
    });
  });

  const move = async (slug: string, status: TicketStatus) => {
    const before = columnsRef.current;
    const from = statusOf(before, slug);
    const card = from ? before[from].cards.find((c) => c.slug === slug) : null;
    if (!card || from === status) return;
    setColumns(placeTicket(before, { ...card, status }, slug, from));
    setAnnouncement(`${slug} moved to ${STATUS_LABELS[status]}.`);
    try {
      await api('PATCH', `/tickets/${encodeURIComponent(slug)}/status`, { status });
    } catch (e) {
      setColumns((now) => placeTicket(now, { ...card, status: from! }, slug, statusOf(now, slug)));
      setAnnouncement(`${slug} could not be moved.`);
      setError(e);
    }
  };

  const onHandleKey = (event: KeyboardEvent, card: Card) => {
    const index = TICKET_STATUSES.indexOf(card.status);
    if (!picked || picked.slug !== card.slug) {
      if (event.key === ' ' || event.key === 'Enter') {
        event.preventDefault();
        setPicked({ slug: card.slug, target: index });
        setAnnouncement(`Picked up ${card.slug} in ${STATUS_LABELS[card.status]}. Left and right arrows choose a column, Enter drops, Escape cancels.`);
      }
      return;
    }
    if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
      event.preventDefault();
      const target = Math.min(TICKET_STATUSES.length - 1, Math.max(0, picked.target + (event.key === 'ArrowRight' ? 1 : -1)));
      setPicked({ slug: card.slug, target });
      setAnnouncement(`Over ${STATUS_LABELS[TICKET_STATUSES[target]]}.`);
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      setPicked(null);
      void move(card.slug, TICKET_STATUSES[picked.target]).then(() => {
        requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-move="${card.slug}"]`)?.focus());
      });
    } else if (event.key === 'Escape' || event.key === 'Tab') {
      setPicked(null);
      setAnnouncement(`${card.slug} not moved.`);
    }
  };

  const applyFilters = (next: Filters) => {
    setFilters(next);
    void reload(next);
  };

  return (
    <section aria-labelledby="board-title">
      <div class="view-head">
        <h1 id="board-title">Board</h1>
        {canWrite ? (
          <button type="button" onClick={() => setEditing('new')}>
            New ticket
          </button>
        ) : null}
      </div>
      <form class="filters" aria-label="Filters" onSubmit={(e) => (e.preventDefault(), applyFilters(filters))}>
        <label>
          Label
          <input value={filters.label} placeholder="e.g. ui, api" onChange={(e) => applyFilters({ ...filters, label: e.currentTarget.value })} />
        </label>
        <label>
          Type
          <select value={filters.type} onChange={(e) => applyFilters({ ...filters, type: e.currentTarget.value })}>
            <option value="">All types</option>
            {TICKET_TYPES.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <AssigneePicker users={names.users} listed={names.usersListed} value={filters.assignee} onChange={(assignee) => applyFilters({ ...filters, assignee })} empty="Anyone" />
        </label>
      </form>
      <ErrorBanner error={error} />
      <p class="visually-hidden" aria-live="assertive">
        {announcement}
      </p>
      {canWrite && <p class="visually-hidden" id="move-help">Press Space to pick the ticket up, the arrow keys to choose a column, Enter to drop it.</p>}
      <div class="board" data-loaded={loaded ? 'true' : 'false'}>
        {TICKET_STATUSES.map((status, index) => (
          <section
            class={`column${dropTarget === status || picked?.target === index ? ' drop-target' : ''}`}
            aria-labelledby={`col-${status}`}
            data-status={status}
            onDragOver={(e) => {
              if (!canWrite) return;
              e.preventDefault();
              setDropTarget(status);
            }}
            onDragLeave={() => setDropTarget(null)}
            onDrop={(e) => {
              e.preventDefault();
              setDropTarget(null);
              const slug = e.dataTransfer?.getData('text/plain');
              if (slug) void move(slug, status);
            }}
          >
            <h2 id={`col-${status}`}>
              {STATUS_LABELS[status]} <span class="count">{columns[status].total}</span>
            </h2>
            <ul>
              {columns[status].cards.map((card) => (
                <li
                  key={card.slug}
                  class={`card priority-${card.priority}${picked?.slug === card.slug ? ' picked' : ''}`}
                  data-slug={card.slug}
                  draggable={canWrite}
                  onDragStart={(e) => {
                    e.dataTransfer?.setData('text/plain', card.slug);
                    if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
                  }}
                >
                  <a class="card-open" href={`#/tickets/${encodeURIComponent(card.slug)}`}>
                    <span class="slug">{card.slug}</span> <span class="title">{card.title}</span>
                  </a>
                  <div class="card-meta">
                    <span class={`tag type-${card.type}`}>{card.type}</span>
                    <span class="tag">{card.priority}</span>
                    {card.assignee_id !== null && <span class="tag assignee">{nameOf(names.users, card.assignee_id)}</span>}
                    {card.labels?.map((l) => <span class="tag label">{l}</span>)}
                    {canWrite && (
                      <button
                        type="button"
                        class="move"
                        data-move={card.slug}
                        aria-label={`Move ${card.slug}`}
                        aria-describedby="move-help"
                        aria-pressed={picked?.slug === card.slug}
                        onKeyDown={(e) => onHandleKey(e, card)}
                        onBlur={() => picked?.slug === card.slug && setPicked(null)}
                      >
                        ⇄
                      </button>
                    )}
                  </div>
                </li>
              ))}
            </ul>
            {columns[status].total > columns[status].cards.length && <p class="more">and {columns[status].total - columns[status].cards.length} more</p>}
          </section>
        ))}
      </div>
      {editing && (
        <TicketDialog
          slug={editing === 'new' ? null : editing}
          canWrite={canWrite && scopes.has('tickets:write')}
          onClose={() => setEditing(null)}
          onSaved={(ticket) => {
            const slug = ticket?.slug ?? (editing === 'new' ? null : editing);
            if (slug) setColumns((current) => placeTicket(current, ticket && matches(ticket, filters) ? ticket : null, slug, statusOf(current, slug)));
            setEditing(null);
          }}
        />
      )}
      {!canWrite && <p class="hint">{scopeReason('tickets:write')} Tickets are read-only here.</p>}
    </section>
  );
}
