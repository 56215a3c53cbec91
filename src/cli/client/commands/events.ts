import { followEvents, type DroverEvent } from '../../../client/sse.ts';
import { EXIT, defined, read, type Command } from '../framework.ts';
import { cell, streamLine, when } from '../output.ts';
import { RAW_TEXT_OPTION } from '../terminal.ts';

/** What an event is about, in a few words: the resource's handle and state. */
export function summary(event: DroverEvent): string {
  const [kind, resource] = Object.entries(event.data)[0] ?? [];
  const r = (resource ?? {}) as Record<string, unknown>;
  switch (kind) {
    case 'ticket':
      return `${r.slug} ${r.status ?? ''} ${cell(r.title, 60)}`;
    case 'pod':
      return `${r.key ?? r.pod_key} ${r.status} ${r.agent_slug ?? ''}`;
    case 'run':
      return `${r.loop_slug}#${r.run_number} ${r.status}`;
    case 'loop':
      return `${r.slug} ${r.status ?? ''}`;
    case 'channel':
      return `${r.id} ${cell(r.name, 40)}`;
    case 'message':
      return `channel ${r.channel_id} ${(r.sender as { name?: string } | null)?.name ?? r.sender_type}: ${cell(r.content, 60)}`;
    case 'runner':
      return `${r.id} ${r.name} ${r.status}`;
    default:
      return cell(event.data, 80);
  }
}

export const eventCommand: Command = {
  name: 'events',
  summary: 'Print the organization\'s events as they happen (tickets, channels and messages, pods, loops and runs, runners), until interrupted.',
  options: {
    types: { type: 'string', value: 'TYPES', description: 'comma-separated types; pod.* selects a family (default: all your key may read)' },
    channel: { type: 'string', value: 'ID', description: 'only events of this channel' },
    pod: { type: 'string', value: 'KEY', description: 'only events of this pod' },
    loop: { type: 'string', value: 'SLUG', description: 'only events of this loop' },
    ticket: { type: 'string', value: 'SLUG', description: 'only events of this ticket' },
    'last-event-id': { type: 'string', value: 'ID', description: 'first replay the events after this id (kept at least 24 h)' },
    raw: RAW_TEXT_OPTION,
  },
  notes: ['A broken connection is resumed from the last event seen. With --json each event is one JSON line {id, type, created_at, data}.'],
  examples: ['drover events', "drover events --types 'pod.*,run.updated' --json", 'drover events --ticket ACME-12 --last-event-id 1200'],
  async run(ctx, p) {
    const client = ctx.client();
    const filters = defined({ types: read.string(p, 'types'), channel_id: read.integer(p, 'channel', 1), pod_key: read.string(p, 'pod'), loop_slug: read.string(p, 'loop'), ticket_slug: read.string(p, 'ticket') });
    const options = {
      signal: ctx.signal,
      lastEventId: read.string(p, 'last-event-id'),
      onRetry: (reason: string, ms: number) => ctx.err.write(`drover: ${reason}; reconnecting in ${ms / 1000} s\n`),
    };
    for await (const event of followEvents(client, filters, options)) {
      if (event.type === 'reset') {
        ctx.err.write('drover: events after the given id are no longer kept; going on from now (reset)\n');
        if (ctx.json) ctx.out.write(`${JSON.stringify({ type: 'reset', id: event.id ?? null })}\n`);
        continue;
      }
      const e = event as DroverEvent;
      streamLine(ctx, e, () => `${String(e.id).padStart(6)}  ${when(e.created_at)}  ${e.type.padEnd(16)} ${summary(e)}\n`);
    }
    return EXIT.OK;
  },
};
