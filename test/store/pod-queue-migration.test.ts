/**
 * Migration 0013 on a database that already holds data, on both databases: `pods.runner_id`
 * becomes nullable (SQLite rebuilds the table) without losing a pod, its output or its indexes, and
 * foreign keys still hold; a loop's `last_session_id` becomes the session of its latest completed
 * run (a failed run's session, stored by the earlier rule, is dropped).
 */
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateTo } from '../../src/store/migrate.ts';
import type { Store } from '../../src/store/db.ts';
import { DATABASES, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const T = Date.parse('2026-11-20T10:00:00.000Z');

describe.each(DATABASES)('migration 0013 on existing data (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store?.close();
    await database?.cleanup();
  });

  it('keeps every pod, its output and the indexes; runner_id takes null; foreign keys hold; last_session_id follows completed runs', async () => {
    database = await createTestDatabase(kind);
    store = database.open();
    await migrateTo(store, '0012_pod_results');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const id = async (table: string, values: Record<string, unknown>) => Number((await db.insertInto(table).values(values).returning('id').executeTakeFirstOrThrow()).id);

    const org = await id('orgs', { slug: 'acme', name: 'Acme', ticket_prefix: 'ACME', created_at: T });
    const runner = await id('runners', {
      org_id: org, name: 'r', credential_hash: 'h', status: 'online', version: '0.1.0', os: 'linux', arch: 'x64', labels: '[]', agents: '[]', sandbox: 'bwrap',
      max_pods: 2, connection_id: null, last_heartbeat_at: T, created_at: T, updated_at: T,
    });
    const pod = (key: string, session: string | null) => ({
      org_id: org, key, runner_id: runner, agent_slug: 'claude-code', status: 'completed', desired_state: 'stop', prompt: 'p', mode: 'direct', config: '{}',
      credentials: '[]', token_prefix: key, token_hash: key, token_encrypted: key, session_id: session, result: `result of ${key}`, usage_cost_usd: 0.25,
      created_at: T, updated_at: T,
    });
    const pods = [];
    for (const [key, session] of [['p-one', 's-completed-old'], ['p-two', 's-completed-new'], ['p-three', 's-failed']] as const) pods.push(await id('pods', pod(key, session)));
    await db.insertInto('pod_output_chunks').values({ pod_id: pods[0], start_offset: 0, end_offset: 12, data: 'hello output' }).execute();
    const loop = await id('loops', {
      org_id: org, slug: 'l', name: 'L', prompt_template: 'x', prompt_variables: '{}', execution_mode: 'direct', cron_timezone: 'UTC', sandbox_strategy: 'persistent',
      session_persistence: 1, concurrency_policy: 'skip', max_concurrent_runs: 1, timeout_minutes: 60, callback_secret_encrypted: 'x', autopilot_config: '{}',
      status: 'enabled', run_counter: 3, last_session_id: 's-failed', created_at: T, updated_at: T,
    });
    const run = (n: number, key: string, status: string, finishedAt: number) => ({
      org_id: org, loop_id: loop, run_number: n, status, trigger_type: 'manual', variables: '{}', pod_key: key, started_at: T, finished_at: finishedAt,
      callback_status: 'none', created_at: T, updated_at: T,
    });
    await id('loop_runs', run(1, 'p-one', 'completed', T + 1000));
    await id('loop_runs', run(2, 'p-two', 'completed', T + 2000));
    await id('loop_runs', run(3, 'p-three', 'failed', T + 3000));
    const before = await db.selectFrom('pods').selectAll().orderBy('id').execute();

    await migrateTo(store, '0013_pod_queue');

    expect(await db.selectFrom('pods').selectAll().orderBy('id').execute()).toEqual(before);
    expect(await db.selectFrom('pod_output_chunks').selectAll().execute()).toEqual([{ pod_id: pods[0], start_offset: 0, end_offset: 12, data: 'hello output' }]);
    const queued = await id('pods', { ...pod('p-queued', null), runner_id: null, status: 'queued' });
    expect((await db.selectFrom('pods').select('runner_id').where('id', '=', queued).executeTakeFirstOrThrow()).runner_id).toBeNull();
    expect((await db.selectFrom('loops').select('last_session_id').where('id', '=', loop).executeTakeFirstOrThrow()).last_session_id).toBe('s-completed-new');
    expect((await db.selectFrom('loops').select('agentfile_layer').where('id', '=', loop).executeTakeFirstOrThrow()).agentfile_layer).toBeNull();

    // The foreign keys of and to pods still hold.
    await expect(db.insertInto('pod_output_chunks').values({ pod_id: 999_999, start_offset: 0, end_offset: 0, data: '' }).execute()).rejects.toThrow(/foreign key/i);
    await expect(id('pods', { ...pod('p-bad-runner', null), runner_id: 999_999 })).rejects.toThrow(/foreign key/i);
    await db.deleteFrom('pods').where('id', '=', pods[0]).execute();
    expect(await db.selectFrom('pod_output_chunks').selectAll().execute()).toEqual([]);
    await expect(db.deleteFrom('orgs').where('id', '=', org).execute()).resolves.toBeDefined();

    const indexes =
      kind === 'sqlite'
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'pods' and sql is not null`.execute(store.db)).rows
        : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'pods' and schemaname = current_schema()`.execute(store.db)).rows;
    expect(indexes.map((i) => i.name)).toEqual(expect.arrayContaining(['pods_org_list', 'pods_org_status', 'pods_runner', 'pods_deadline', 'pods_token', 'pods_status_created']));
  });
});
