/**
 * A ticket's history from the activity log (`GET /activity`, the people work): the events about the
 * ticket and its pods, newest first, with who made each change. Without the activity endpoint the
 * section says so instead of failing.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { formatTime } from '../ui.tsx';
import type { Actor } from './pods-model.ts';

interface ActivityEvent {
  id: number;
  type: string;
  created_at: string;
  actor?: Actor | null;
  data: Record<string, unknown>;
}

const about = (event: ActivityEvent, slug: string): boolean => {
  const ticket = event.data.ticket as { slug?: string } | undefined;
  const pod = event.data.pod as { ticket_slug?: string } | undefined;
  return ticket?.slug === slug || pod?.ticket_slug === slug || event.data.ticket_slug === slug;
};

export function TicketHistory({ slug }: { slug: string }) {
  const [events, setEvents] = useState<ActivityEvent[] | null>(null);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    api<{ events: ActivityEvent[] }>('GET', '/activity?types=ticket.created,ticket.updated,ticket.status_changed,pod.created,pod.updated&limit=200').then(
      (r) => setEvents((r.events ?? []).filter((e) => about(e, slug))),
      () => setMissing(true),
    );
  }, [slug]);
  return (
    <section class="panel" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {missing ? (
        <p class="hint">This server keeps no activity log yet.</p>
      ) : events === null ? (
        <p class="hint">Reading the history…</p>
      ) : events.length === 0 ? (
        <p class="hint">Nothing recorded for this ticket in the last 30 days.</p>
      ) : (
        <ol class="history">
          {events.map((e) => (
            <li>
              <span class="hint">{formatTime(e.created_at)}</span> {e.type.replace('.', ' ')}
              {e.actor && <> by {e.actor.name ?? e.actor.type}</>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
