/**
 * Removing a deleted loop's persistent workspace (docs/agents.md "Getting the work back"): what
 * its runs left undelivered (a push that failed, work after the last delivery) is delivered first
 * as a pod's work is (./delivery/), from the commit delivered last, to the loop's branch; only
 * then is the directory removed (rm -rf that removes links, never follows them). A delivery that
 * fails keeps the workspace: the server asks again after the runner's next reconnect.
 */
import type { DeliveryReport } from '../protocol/delivery.ts';
import type { ServerMessage } from '../protocol/runner-link.ts';
import { deliverWork } from './delivery/index.ts';
import type { Sandbox } from './sandbox/index.ts';
import type { WorkspaceManager } from './workspaces.ts';

export type WorkspaceRemoval = Omit<Extract<ServerMessage, { type: 'remove_workspace' }>, 'v' | 'type'>;
export interface WorkspaceRemoved {
  removed: boolean;
  error: string | null;
  /** The final delivery (its patch left out: no pod keeps it); null: nothing was to deliver. */
  delivery: DeliveryReport | null;
}

const FINAL_DELIVERY_TIMEOUT_MS = 5 * 60_000;

export async function removePersistentWorkspace(manager: WorkspaceManager, request: WorkspaceRemoval, sandbox: Sandbox | null): Promise<WorkspaceRemoved> {
  const key = request.persistent_key;
  const work = await manager.persistentWork(key);
  let delivery: DeliveryReport | null = null;
  if (work?.origin && request.repo && request.deliver.mode !== 'none') {
    const report = await deliverWork({
      podKey: key,
      persistentKey: key,
      repo: { url: request.repo.url, token: request.repo.token, defaultBranch: request.repo.default_branch },
      deliver: { mode: 'branch', branch: request.deliver.branch },
      workspace: { path: work.path, home: work.home, readOnly: work.readOnly, ...work.origin },
      outDir: manager.deliveryDir(key),
      sandbox,
      timeoutMs: FINAL_DELIVERY_TIMEOUT_MS,
    });
    delivery = { ...report, patch: null };
    if (report.status === 'failed') return { removed: false, error: `its work was not delivered: ${report.error ?? 'unknown error'}`.slice(0, 2000), delivery };
  }
  await manager.removePersistent(key);
  await manager.release(key, { keep: false }); // the delivery's own directory (pods/<key>)
  return { removed: true, error: null, delivery };
}
