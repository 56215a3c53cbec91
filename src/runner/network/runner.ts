import fs from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../../agents/detect.ts';
import { SandboxError, type Sandbox } from '../sandbox/index.ts';
import { parseOperatorAllow, type RunnerNetworkOptions } from './index.ts';

/**
 * A runner's network walls, set up once at start: null without a sandbox (`--sandbox none` has no
 * walls). A runner that cannot build them (no `socat`) refuses to start, naming the fix, as it
 * does when bubblewrap is missing. Pods' directories left by an earlier run are removed.
 */
export async function runnerNetwork(
  sandbox: Sandbox,
  options: { workDir: string; pathEnv: string; allowHosts: readonly string[]; servers: readonly string[] },
): Promise<RunnerNetworkOptions | null> {
  const operatorAllow = parseOperatorAllow(options.allowHosts);
  if (!sandbox.network) return null;
  const socat = await findExecutable('socat', options.pathEnv);
  if (!socat) throw new SandboxError('the pod network walls need socat, and "socat" was not found on PATH: install it (e.g. `apt-get install socat`) or start the runner with --sandbox none');
  const dir = path.join(options.workDir, 'net');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  return { dir, socat, operatorAllow, servers: options.servers };
}
