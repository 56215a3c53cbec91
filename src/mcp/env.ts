/**
 * What `drover mcp` reads from its environment (docs/mcp.md): the server, the organization and
 * the credential (a pod's DROVER_POD_TOKEN inside a pod, else a person's DROVER_API_KEY), and,
 * inside a pod, its default channel and its autopilot status file.
 */
export interface McpEnvironment {
  server: string;
  org: string;
  credential: string;
  /** `channel_id` of the channel tools when the call names none (the pod's DROVER_CHANNEL_ID). */
  defaultChannelId: number | null;
  /** The pod's DROVER_STATUS_FILE: `report_status` writes it; absent outside a pod. */
  statusFile: string | null;
  /** The pod this server runs in (DROVER_POD_KEY), if any. */
  podKey: string | null;
}

export class EnvironmentError extends Error {}

function positiveInteger(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  return /^[1-9][0-9]{0,15}$/.test(value.trim()) ? Number(value.trim()) : null;
}

const present = (value: string | undefined): string | null => (value !== undefined && value.trim() !== '' ? value.trim() : null);

/** Reads and checks the environment; a missing variable is an EnvironmentError naming it. */
export function readEnvironment(env: NodeJS.ProcessEnv): McpEnvironment {
  const server = present(env.DROVER_API_URL);
  const org = present(env.DROVER_ORG);
  const credential = present(env.DROVER_POD_TOKEN) ?? present(env.DROVER_API_KEY);
  const missing = [!server && 'DROVER_API_URL', !org && 'DROVER_ORG', !credential && 'DROVER_POD_TOKEN or DROVER_API_KEY'].filter(Boolean);
  if (missing.length > 0) throw new EnvironmentError(`drover mcp needs ${missing.join(', ')} in its environment`);
  if (present(env.DROVER_CHANNEL_ID) && positiveInteger(env.DROVER_CHANNEL_ID) === null) {
    throw new EnvironmentError(`DROVER_CHANNEL_ID must be a channel id (a positive integer), got "${env.DROVER_CHANNEL_ID}"`);
  }
  return {
    server: server!,
    org: org!,
    credential: credential!,
    defaultChannelId: positiveInteger(env.DROVER_CHANNEL_ID),
    statusFile: present(env.DROVER_STATUS_FILE),
    podKey: present(env.DROVER_POD_KEY),
  };
}
