import crypto from 'node:crypto';
import type { PodConfig } from '../../src/domain/pods/model.ts';
import type { Store } from '../../src/store/db.ts';
import type { PodRow, PodsTable } from '../../src/store/schema-runners.ts';

let podSeq = 0;

const CONFIG: PodConfig = {
  model: null,
  max_turns: null,
  pod_timeout_minutes: null,
  auto_close: true,
  sandbox_type: null,
  max_iterations: 10,
  iteration_timeout_sec: 600,
  permission_mode: null,
  persistent_key: null,
  keep_workspace: false,
  resume_session_id: null,
  loop_run_id: null,
};

/**
 * A pod row written straight to the store (no placement, no runner process, the default configuration), `running` on
 * `runnerId` unless `overrides` say otherwise: for store and domain tests that need a pod to hang
 * output or a run on.
 */
export async function insertPodRow(store: Store, orgId: number, runnerId: number, overrides: Partial<Omit<PodsTable, 'id'>> = {}): Promise<PodRow> {
  podSeq += 1;
  const now = Date.now();
  return store.db
    .insertInto('pods')
    .values({
      org_id: orgId,
      key: `p-test-${podSeq}-${crypto.randomBytes(4).toString('hex')}`,
      runner_id: runnerId,
      agent_slug: 'shell',
      status: 'running',
      desired_state: 'run',
      prompt: 'true',
      mode: 'direct',
      config: JSON.stringify(CONFIG),
      repository_id: null,
      branch: null,
      ticket_slug: null,
      channel_id: null,
      alias: null,
      credentials: '[]',
      token_prefix: `tp${podSeq}`,
      token_hash: crypto.randomBytes(16).toString('hex'),
      token_encrypted: 'unused',
      error_message: null,
      exit_code: null,
      session_id: null,
      started_at: now,
      deadline_at: null,
      finished_at: null,
      created_at: now,
      updated_at: now,
      ...overrides,
      // network_refused (migration 0016) is left to its column default, so migration tests that
      // insert pods at an earlier schema work too.
    } as Omit<PodsTable, 'id'>)
    .returningAll()
    .executeTakeFirstOrThrow();
}
