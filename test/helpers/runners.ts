import WebSocket from 'ws';
import type { Store } from '../../src/store/db.ts';
import type { RunnersTable } from '../../src/store/schema-runners.ts';

export type RunnerOverrides = Partial<Omit<RunnersTable, 'id' | 'org_id'>>;

let runnerSeq = 0;

/**
 * A runner row written straight to the store (no process behind it): online, heartbeating at `at`,
 * offering `shell` and `claude-code` with room for 10,000 pods unless `overrides` say otherwise.
 */
export async function insertRunner(store: Store, orgId: number, overrides: RunnerOverrides = {}, at = Date.now()): Promise<number> {
  runnerSeq += 1;
  const row = await store.db
    .insertInto('runners')
    .values({
      org_id: orgId,
      name: `runner-${runnerSeq}`,
      credential_hash: `test-credential-${runnerSeq}-${Math.random().toString(36).slice(2)}`,
      status: 'online',
      version: '0.1.0',
      os: 'linux',
      arch: 'x64',
      labels: '[]',
      agents: '["shell","claude-code"]',
      max_pods: 10_000,
      connection_id: null,
      last_heartbeat_at: at,
      created_at: at,
      updated_at: at,
      ...overrides,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** What the server at `baseUrl` answers a runner link's WebSocket upgrade with this credential: 101 (a link) or the HTTP status. */
export function upgradeStatus(baseUrl: string, credential: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/v1/runner/connect`, { headers: { authorization: `Bearer ${credential}` } });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', (error) => {
      if (!/closed before the connection/.test(error.message)) reject(error);
    });
  });
}
