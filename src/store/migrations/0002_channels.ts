import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

export function channels(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await idColumn(kind, db.schema.createTable('channels'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        // The name lower-cased: names are unique per org ignoring case.
        .addColumn('name_key', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('repository_id', 'bigint', (c) => c.references('repositories.id'))
        // The ticket's canonical (upper-case) slug; slugs are never reused, so it outlives a deleted ticket harmlessly.
        .addColumn('ticket_slug', 'text')
        .addColumn('document', 'text')
        .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('channels_org_name_key', ['org_id', 'name_key'])
        .execute();
      // Lists are newest first, optionally filtered by repository or ticket.
      await db.schema.createIndex('channels_list').on('channels').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('channels_repo_list').on('channels').columns(['org_id', 'repository_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('channels_ticket_list').on('channels').columns(['org_id', 'ticket_slug', 'created_at', 'id']).execute();

      await idColumn(kind, db.schema.createTable('channel_messages'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id').onDelete('cascade'))
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('sender_type', 'text', (c) => c.notNull())
        .addColumn('pod_key', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // Every message read is a keyset page on this index (channel_id = ? and id < / > cursor), whatever the channel's size.
      await db.schema.createIndex('channel_messages_page').on('channel_messages').columns(['channel_id', 'id']).execute();
    },
  };
}
