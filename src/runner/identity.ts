import { networkCause } from '../client/network.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const RUNNER_VERSION = '0.1.0';
/** Slots of a runner started for the first time without --max-pods. */
export const DEFAULT_MAX_PODS = 4;

/** What the runner keeps in `<work dir>/runner.json` (mode 0600). */
export interface StoredIdentity {
  server: string;
  runner_id: number;
  org: string;
  credential: string;
  /** The settings it registered or was last started with; a restart without the flags keeps them. */
  settings?: RunnerSettings;
}

export interface RunnerSettings {
  name: string;
  labels: string[];
  max_pods: number;
}

/** The runner's identity file, `<work dir>/runner.json`: its credential and its settings. */
export class IdentityStore {
  readonly file: string;

  constructor(
    workDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.file = path.join(workDir, 'runner.json');
  }

  load(): StoredIdentity | null {
    // The credential is the identity; the server's address may change between starts.
    return fs.existsSync(this.file) ? (JSON.parse(fs.readFileSync(this.file, 'utf8')) as StoredIdentity) : null;
  }

  /** Writes the file whole (a crash leaves the old or the new one, never half of one), mode 0600. */
  save(identity: StoredIdentity): void {
    const temporary = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, JSON.stringify(identity, null, 2) + '\n', { mode: 0o600 });
    fs.renameSync(temporary, this.file);
  }

  /**
   * The settings a restart runs with: a flag wins (and is remembered), an absent one keeps what the
   * file remembers, so a restart without --max-pods does not silently change the slots.
   */
  resolve(identity: StoredIdentity, flags: { labels?: string[]; maxPods?: number }): { identity: StoredIdentity; settings: RunnerSettings } {
    const stored = identity.settings;
    const settings: RunnerSettings = {
      name: stored?.name ?? os.hostname(),
      labels: flags.labels ?? stored?.labels ?? [],
      max_pods: flags.maxPods ?? stored?.max_pods ?? DEFAULT_MAX_PODS,
    };
    if (stored && flags.maxPods !== undefined && flags.maxPods !== stored.max_pods) {
      this.log(`max_pods ${stored.max_pods} → ${settings.max_pods} (from --max-pods)`);
    } else if (stored && flags.maxPods === undefined) {
      this.log(`max_pods ${settings.max_pods} (kept from ${this.file}; --max-pods changes it)`);
    }
    if (JSON.stringify(stored) === JSON.stringify(settings)) return { identity, settings };
    const updated = { ...identity, settings };
    this.save(updated);
    return { identity: updated, settings };
  }
}

/** Registers with the first of `servers` that answers; the identity to keep. */
export async function registerRunner(servers: readonly string[], token: string, settings: RunnerSettings): Promise<StoredIdentity> {
  let unreachable: Error | null = null;
  for (const server of servers) {
    let response: Response;
    try {
      response = await fetch(`${server}/api/v1/runner/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, ...settings, version: RUNNER_VERSION, os: process.platform, arch: process.arch }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      unreachable = new Error(`cannot reach the server at ${server}/api/v1/runner/register: ${networkCause(error)}`);
      continue;
    }
    const body = (await response.json().catch(() => ({}))) as { runner_id?: number; credential?: string; org?: string; error?: string };
    if (!response.ok || !body.credential || !body.runner_id) {
      throw new Error(`registration failed (${response.status}): ${body.error ?? 'no credential in the answer'}`);
    }
    return { server, runner_id: body.runner_id, org: body.org ?? '', credential: body.credential, settings };
  }
  throw new Error(`registration failed: ${unreachable?.message ?? 'no server given'}`);
}

/**
 * The runner's identity and settings: what its work dir remembers (with the given labels and
 * max pods, which it then remembers), else a registration with `options.token`.
 */
export async function loadOrRegister(
  store: IdentityStore,
  servers: readonly string[],
  options: { token?: string | null; name?: string; labels?: string[]; maxPods?: number },
  log: (line: string) => void,
): Promise<{ identity: StoredIdentity; settings: RunnerSettings }> {
  const stored = store.load();
  if (stored) return store.resolve(stored, { labels: options.labels, maxPods: options.maxPods });
  if (!options.token) throw new Error(`no runner credential in ${store.file}; pass --token with a registration token`);
  const settings: RunnerSettings = { name: options.name ?? os.hostname(), labels: options.labels ?? [], max_pods: options.maxPods ?? DEFAULT_MAX_PODS };
  const identity = await registerRunner(servers, options.token, settings);
  store.save(identity);
  log(`registered as runner ${identity.runner_id} of organization "${identity.org}"`);
  return { identity, settings };
}
