import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';
import { idColumn } from './columns.ts';

export function foundation(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await idColumn(kind, db.schema.createTable('orgs'))
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('ticket_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await idColumn(kind, db.schema.createTable('api_keys'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();
      await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'created_at']).execute();

      await idColumn(kind, db.schema.createTable('users'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('users_org_email', ['org_id', 'email'])
        .execute();

      await idColumn(kind, db.schema.createTable('repositories'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('full_name', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('default_branch', 'text', (c) => c.notNull())
        .addColumn('ticket_prefix', 'text')
        .addColumn('api_base_url', 'text')
        .addColumn('token_encrypted', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('repositories_org').on('repositories').columns(['org_id', 'created_at']).execute();

      await idColumn(kind, db.schema.createTable('tickets'))
        .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('priority', 'text', (c) => c.notNull())
        .addColumn('priority_rank', 'integer', (c) => c.notNull())
        .addColumn('assignee_id', 'bigint', (c) => c.references('users.id'))
        .addColumn('repository_id', 'bigint', (c) => c.references('repositories.id'))
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('parent_id', 'bigint', (c) => c.references('tickets.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('tickets_org_slug', ['org_id', 'slug'])
        .execute();
      // Lists are newest first, optionally filtered; the board reads each column top-down by priority.
      await db.schema.createIndex('tickets_list').on('tickets').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('tickets_board')
        .on('tickets')
        .columns(['org_id', 'status', 'priority_rank', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('tickets_repo_board')
        .on('tickets')
        .columns(['org_id', 'repository_id', 'status', 'priority_rank', 'created_at', 'id'])
        .execute();
      await db.schema.createIndex('tickets_status_list').on('tickets').columns(['org_id', 'status', 'created_at', 'id']).execute();
      await db.schema.createIndex('tickets_repo_list').on('tickets').columns(['org_id', 'repository_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('tickets_assignee').on('tickets').columns(['org_id', 'assignee_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('tickets_type').on('tickets').columns(['org_id', 'type', 'created_at', 'id']).execute();
      await db.schema.createIndex('tickets_parent').on('tickets').column('parent_id').execute();

      await db.schema
        .createTable('ticket_labels')
        .addColumn('ticket_id', 'bigint', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('ticket_labels_pk', ['ticket_id', 'label'])
        .execute();
      await db.schema.createIndex('ticket_labels_lookup').on('ticket_labels').columns(['org_id', 'label', 'ticket_id']).execute();

      await db.schema
        .createTable('ticket_sequences')
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('last_number', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('ticket_sequences_pk', ['org_id', 'prefix'])
        .execute();

      await db.schema
        .createTable('ticket_counts')
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('repo_key', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('ticket_counts_pk', ['org_id', 'repo_key', 'status'])
        .execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('api_key_id', 'bigint', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('method_path', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_age').on('idempotency_keys').column('created_at').execute();
    },
  };
}
