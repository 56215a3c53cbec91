/**
 * A small API client for end-to-end tests of pods, bound to one server process and one API key:
 * create `shell` pods from a script, wait for their status, read their output, and issue runner
 * registration tokens with the admin token.
 */
import { expect } from 'vitest';
import { waitFor } from './runner-process.ts';
import { http } from './server-process.ts';

export const ORG = '/api/v1/ext/orgs/default';

export interface PodDetail {
  key: string;
  status: string;
  exit_code: number | null;
  error_message: string | null;
  runner_id: number | null;
  queue_position: number | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
}

/** A heredoc PROMPT with the script, after the other directive lines. */
export function shellLayer(script: string, ...directives: string[]): string {
  if (/^END$/m.test(script)) throw new Error('the script must not contain a line END');
  return [...directives, 'PROMPT <<END', script, 'END'].join('\n');
}

export function podClient(base: () => string, key: () => string, adminToken: string) {
  const api = (method: string, urlPath: string, body?: unknown) => http(base(), method, urlPath, { key: key(), body });
  const getPod = async (podKey: string): Promise<PodDetail> => {
    const response = await api('GET', `${ORG}/pods/${podKey}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { pod: PodDetail }).pod;
  };
  return {
    api,
    getPod,
    /** A pod from a POST /pods body; its key. */
    async launch(body: Record<string, unknown>): Promise<string> {
      const response = await api('POST', `${ORG}/pods`, body);
      expect(response.status, response.text).toBe(201);
      return (response.body as { pod: { pod_key: string } }).pod.pod_key;
    },
    /** A `shell` pod running `script` (after the agentfile `directives`), on `runnerId` if given. */
    async createPod(script: string, runnerId?: number, ...directives: string[]): Promise<string> {
      return this.launch({ agent_slug: 'shell', agentfile_layer: shellLayer(script, ...directives), ...(runnerId ? { runner_id: runnerId } : {}) });
    },
    waitStatus: (podKey: string, statuses: string[], timeout = 15_000) =>
      waitFor(
        async () => {
          const pod = await getPod(podKey);
          return statuses.includes(pod.status) ? pod : undefined;
        },
        { timeout, what: `pod ${podKey} to be ${statuses.join('|')}` },
      ),
    async runnerStatus(runnerId: number): Promise<string> {
      const response = await api('GET', `${ORG}/runners/${runnerId}`);
      return (response.body as { runner: { status: string } }).runner.status;
    },
    async output(podKey: string): Promise<string> {
      return ((await api('GET', `${ORG}/pods/${podKey}/output`)).body as { output: string }).output;
    },
    async registrationToken(): Promise<string> {
      const response = await http(base(), 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: adminToken, body: {} });
      expect(response.status).toBe(201);
      return (response.body as { token: string }).token;
    },
  };
}
