import path from 'node:path';
import fs from 'node:fs';
import { loadCredentials } from '../cli/runner.ts';
import type { DomainContext } from '../domain/context.ts';
import { issueRegistrationToken } from '../domain/runners/service.ts';
import { findOrgBySlug } from '../store/orgs.ts';
import { RunnerDaemon } from './daemon.ts';

/**
 * The runner `drover serve` starts in its own process on the embedded default, registered to
 * the `default` organization, so the first command of the README gives a working system.
 */
export async function startLocalRunner(
  ctx: DomainContext,
  options: { dataDir: string; serverUrl: string; maxPods: number; log: (line: string) => void },
): Promise<RunnerDaemon | null> {
  const workDir = path.join(options.dataDir, 'runner');
  let token: string | null = null;
  if (!fs.existsSync(path.join(workDir, 'runner.json'))) {
    const org = await findOrgBySlug(ctx.store.db, 'default');
    if (!org) {
      options.log('no organization "default": the local runner is not started');
      return null;
    }
    token = (await issueRegistrationToken(ctx, org.id, { labels: ['local'], expires_in_hours: 1 })).token;
  }
  const daemon = new RunnerDaemon({
    server: options.serverUrl,
    token,
    name: 'local',
    labels: ['local'],
    maxPods: options.maxPods,
    workDir,
    // The same credentials as `drover runner` (CREDENTIAL directives): <work dir>/credentials.json
    // and DROVER_CREDENTIAL_<NAME> of the server's environment.
    credentials: loadCredentials(workDir, process.env),
    log: options.log,
  });
  await daemon.start();
  await daemon.connected(10_000);
  return daemon;
}
