import { parseActor } from '../../events/actor.ts';
import type { ChannelListRow } from '../../store/channels.ts';
import type { ChannelMessageRow, ChannelRow } from '../../store/schema.ts';
import { iso } from '../iso.ts';

export function channelListItem(row: ChannelListRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    repository_id: row.repository_id,
    ticket_slug: row.ticket_slug,
    archived: row.archived === 1,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A channel as `GET /channels/{id}` and its events show it. */
export const channelView = (row: ChannelRow) => ({ ...channelListItem(row), document: row.document });

export const messageView = (row: ChannelMessageRow) => ({
  id: row.id,
  channel_id: row.channel_id,
  content: row.content,
  sender_type: row.sender_type,
  sender: parseActor(row.sender),
  pod_key: row.pod_key,
  created_at: iso(row.created_at),
});
