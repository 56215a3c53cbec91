import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../db.ts';

/**
 * Pods wait for a runner, and loops give their runs an agentfile (docs/agents.md).
 *
 * - `pods.runner_id` becomes nullable: a `queued` pod has no runner until a slot frees.
 * - `pods_status_created` finds queued pods past their queue timeout, and the organizations that
 *   have queued pods, without a scan (the FIFO order of one organization uses `pods_org_status`).
 * - `loops.agentfile_layer`: the agentfile every run's pod gets.
 * - `loops.last_session_id` is the session of the loop's latest `completed` run from now on; ids
 *   stored from failed, cancelled or timed-out runs are replaced by that rule.
 */
export function podQueue(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind === 'postgres') await sql`alter table pods alter column runner_id drop not null`.execute(db);
      else await dropNotNullOnSqlite(db, 'pods', 'runner_id');
      await db.schema.createIndex('pods_status_created').on('pods').columns(['status', 'created_at', 'id']).execute();
      await db.schema.alterTable('loops').addColumn('agentfile_layer', 'text').execute();
      await sql`
        update loops set last_session_id = (
          select p.session_id from loop_runs r join pods p on p.key = r.pod_key
          where r.loop_id = loops.id and r.status = 'completed' and p.session_id is not null
          order by r.finished_at desc, r.id desc limit 1
        )`.execute(db);
    },
  };
}

/**
 * SQLite cannot drop a NOT NULL constraint in place: the table is rebuilt (SQLite's documented
 * procedure: foreign keys off, create the new table, copy, drop, rename, indexes, check). The new
 * definition is the stored one with that one constraint removed, so columns that other migrations
 * added before this one are kept as they are.
 */
async function dropNotNullOnSqlite(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  const definition = rows[0]?.sql;
  if (!definition) throw new Error(`table ${table} not found`);
  const constraint = new RegExp(`("${column}"\\s+\\w+)\\s+not null`, 'i');
  if (!constraint.test(definition)) return; // already nullable
  const rebuilt = `${table}_rebuild`;
  const createRebuilt = definition.replace(constraint, '$1').replace(/^create table\s+("?)\w+\1/i, `create table "${rebuilt}"`);
  const indexes = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(db)).rows;

  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin`.execute(db);
    try {
      await sql.raw(createRebuilt).execute(db);
      await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db);
      await sql.raw(`drop table "${table}"`).execute(db);
      await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
      for (const index of indexes) await sql.raw(index.sql).execute(db);
      const broken = await sql`pragma foreign_key_check`.execute(db);
      if (broken.rows.length > 0) throw new Error(`rebuilding ${table} broke ${broken.rows.length} foreign keys`);
      await sql`commit`.execute(db);
    } catch (error) {
      await sql`rollback`.execute(db);
      throw error;
    }
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
