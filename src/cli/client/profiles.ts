/**
 * Where the client commands find their server, organization and key (docs/cli.md): profiles in
 * `$XDG_CONFIG_HOME/drover/config.json` (default `~/.config/drover/config.json`, mode 0600),
 * written by `drover login`, and the environment.
 *
 * Precedence, field by field: `--profile NAME` (that profile, whatever the environment says) →
 * DROVER_API_URL, DROVER_ORG, DROVER_API_KEY (or DROVER_POD_TOKEN inside a pod) → the profile
 * `drover login` stored last.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './framework.ts';

export interface Profile {
  server: string;
  org: string;
  api_key: string;
}

export interface ConfigFile {
  /** The profile used when none is named. */
  current?: string;
  profiles: Record<string, Profile>;
}

export interface Connection {
  server: string;
  org: string;
  apiKey: string;
}

export const DEFAULT_PROFILE = 'default';

export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'drover', 'config.json');
}

export function readConfig(file: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const config = JSON.parse(text) as ConfigFile;
    if (!config || typeof config !== 'object' || typeof config.profiles !== 'object' || config.profiles === null) throw new Error('no "profiles" object');
    return config;
  } catch (error) {
    throw new UsageError(`${file} is not a drover config file (${(error as Error).message}); fix or delete it, then run drover login`);
  }
}

/**
 * Stores a profile and makes it the current one. The file holds API keys: it is written 0600 in a
 * 0700 directory, through a temporary file renamed over it (never readable by others, never half
 * written).
 */
export function saveProfile(file: string, name: string, profile: Profile): void {
  const config = readConfig(file);
  config.profiles[name] = profile;
  config.current = name;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(temporary, 0o600); // whatever the umask did
  fs.renameSync(temporary, file);
}

const MISSING = 'run "drover login --server URL --org ORG --api-key KEY", or set DROVER_API_URL, DROVER_ORG and DROVER_API_KEY';

export function resolveConnection(env: NodeJS.ProcessEnv, profileName: string | undefined): Connection {
  const file = configPath(env);
  const config = readConfig(file);
  if (profileName !== undefined) {
    const profile = config.profiles[profileName];
    if (!profile) throw new UsageError(`no profile "${profileName}" in ${file}: run "drover login --profile ${profileName} …"`);
    return { server: profile.server, org: profile.org, apiKey: profile.api_key };
  }
  const stored = config.profiles[config.current ?? DEFAULT_PROFILE];
  const server = env.DROVER_API_URL || stored?.server;
  const org = env.DROVER_ORG || stored?.org;
  const apiKey = env.DROVER_API_KEY || env.DROVER_POD_TOKEN || stored?.api_key;
  const missing = [!server && 'server (DROVER_API_URL)', !org && 'organization (DROVER_ORG)', !apiKey && 'API key (DROVER_API_KEY)'].filter(Boolean);
  if (missing.length > 0) throw new UsageError(`no ${missing.join(', ')} configured: ${MISSING}`);
  return { server: server!, org: org!, apiKey: apiKey! };
}
