/**
 * Pods that use `drover mcp` with their own token (docs/mcp.md), as real processes: `shell` pods
 * on the local runner, inside the bubblewrap sandbox, call the server through a small stdio MCP
 * client (test/fixtures/mcp/mcp-call.mjs, the SDK's Client), as an agent CLI would.
 *
 * - Two pods collaborate: A spawns B with a prompt, B posts its answer to the channel it inherited
 *   from A, A's channel_wait receives it, then A waits for B and reads its output.
 * - Depth: a chain of spawns stops 3 levels below the pod created through the API, with the
 *   tool error SPAWN_DEPTH_EXCEEDED.
 * - Fan-out: the 11th active child is refused with TOO_MANY_CHILDREN; terminating the parent
 *   terminates its 10 children.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { REPO_ROOT, createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'mcp');
const CALL = `node ${path.join(FIXTURES, 'mcp-call.mjs')}`;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
/** A bash function `b64 JSON` for arguments built in the script itself. */
const B64_FUNCTION = "b64() { printf '%s' \"$1\" | base64 -w0; }";

interface Pod {
  key: string;
  status: string;
  parent_pod_key: string | null;
  channel_id: number | null;
  error_message: string | null;
}

describe.each(DATABASES)('pods collaborating over drover mcp (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;

  const api = async <T>(method: string, urlPath: string, body?: unknown): Promise<T> => {
    const response = await http(server.url, method, `${ORG}${urlPath}`, { key, body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body as T;
  };
  const pod = async (podKey: string) => (await api<{ pod: Pod }>('GET', `/pods/${podKey}`)).pod;
  const output = async (podKey: string) => (await api<{ output: string }>('GET', `/pods/${podKey}/output`)).output;
  const shellPod = async (script: string, ...directives: string[]) =>
    (await api<{ pod: { pod_key: string } }>('POST', '/pods', { agent_slug: 'shell', agentfile_layer: [...directives, `PROMPT ${JSON.stringify(script)}`].join('\n') })).pod.pod_key;
  const ended = (podKey: string, timeout = 120_000) =>
    waitFor(
      async () => {
        const p = await pod(podKey);
        return ['completed', 'failed', 'terminated'].includes(p.status) ? p : undefined;
      },
      { timeout, what: `pod ${podKey} to end` },
    );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({
      dataDir: database.dataDir,
      // The test's MCP client script is readable in the sandbox, as an operator's extra path.
      env: { ...database.env, DROVER_LOCAL_RUNNER: 'true', DROVER_LOCAL_RUNNER_MAX_PODS: '16', DROVER_SANDBOX_READ_ONLY: FIXTURES },
      localRunner: true,
    });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await waitFor(async () => (await api<{ runners: { status: string }[] }>('GET', '/runners')).runners.find((r) => r.status === 'online'), { timeout: 30_000, what: 'the local runner' });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
  });

  it('pod A spawns pod B; B posts its answer to the shared channel; A receives it with channel_wait, then waits for B and reads its output', async () => {
    const channelId = (await api<{ channel: { id: number } }>('POST', '/channels', { name: `collaborate-${kind}` })).channel.id;
    const bScript = [`${CALL} channel_post ${b64({ content: 'answer from B: 6 x 7 = 42' })} --field message.id`, 'echo "B is done"'].join('\n');
    const aScript = [
      B64_FUNCTION,
      'set -e',
      // The newest message before B exists (A's own "started" message at least), so nothing B says is missed.
      `last=$(${CALL} channel_read $(b64 '{"limit":1}') --field messages.0.id)`,
      `child=$(${CALL} pod_spawn ${b64({ agent_slug: 'shell', prompt: bScript })} --field pod.pod_key)`,
      'echo "spawned $child"',
      `${CALL} channel_wait $(b64 "{\\"after\\":$last,\\"timeout_sec\\":120}") --until 'answer from B'`,
      `echo "child status: $(${CALL} pod_wait $(b64 "{\\"pod_key\\":\\"$child\\",\\"timeout_sec\\":120}") --field pod.status)"`,
      `${CALL} pod_output $(b64 "{\\"pod_key\\":\\"$child\\"}") --field output`,
    ].join('\n');
    const a = await shellPod(aScript, `CONFIG channel_id = ${channelId}`);
    const finished = await ended(a);
    const text = await output(a);
    expect(finished.status, text).toBe('completed');

    const bKey = /spawned (p-[a-z0-9]+)/.exec(text)?.[1];
    expect(bKey, text).toBeDefined();
    const received = JSON.parse(text.split('\n').find((line) => line.includes('answer from B'))!) as { sender_type: string; pod_key: string; content: string };
    expect(received).toMatchObject({ sender_type: 'agent', pod_key: bKey, content: 'answer from B: 6 x 7 = 42' });
    expect(text).toContain('child status: completed');
    expect(text).toMatch(/\n\d+\nB is done\n/);
    expect(await pod(bKey!)).toMatchObject({ parent_pod_key: a, channel_id: channelId, status: 'completed' });
    const messages = (await api<{ messages: { sender_type: string; pod_key: string | null; content: string }[] }>('GET', `/channels/${channelId}/messages`)).messages;
    expect(messages).toContainEqual(expect.objectContaining({ sender_type: 'agent', pod_key: bKey, content: 'answer from B: 6 x 7 = 42' }));
  });

  it('a chain of spawns stops 3 levels below the pod created through the API: the 4th spawn is the tool error SPAWN_DEPTH_EXCEEDED', async () => {
    const level = (n: number): string => {
      if (n === 3) return [`${CALL} pod_spawn ${b64({ agent_slug: 'shell', prompt: 'echo too deep' })} || echo "level 3 refused"`].join('\n');
      return [
        B64_FUNCTION,
        `child=$(${CALL} pod_spawn ${b64({ agent_slug: 'shell', prompt: level(n + 1) })} --field pod.pod_key)`,
        `echo "level ${n} spawned $child"`,
        `${CALL} pod_wait $(b64 "{\\"pod_key\\":\\"$child\\",\\"timeout_sec\\":200}") --field pod.status >/dev/null`,
        `${CALL} pod_output $(b64 "{\\"pod_key\\":\\"$child\\"}") --field output`,
      ].join('\n');
    };
    const root = await shellPod(level(0));
    expect((await ended(root, 240_000)).status).toBe('completed');
    const text = await output(root);
    for (const n of [0, 1, 2]) expect(text).toMatch(new RegExp(`level ${n} spawned p-`));
    expect(text).toMatch(/TOOL_ERROR SPAWN_DEPTH_EXCEEDED: pod p-[a-z0-9]+ is 3 levels below a pod created through the API/);
    expect(text).toContain('level 3 refused');
    expect(text).not.toContain('too deep\n');
  });

  it('the 11th active child is the tool error TOO_MANY_CHILDREN; terminating the parent terminates its children', async () => {
    const script = [
      B64_FUNCTION,
      `for i in $(seq 1 11); do echo "spawn $i: $(${CALL} pod_spawn ${b64({ agent_slug: 'shell', prompt: 'sleep 300' })} --field pod.pod_key)"; done`,
      'echo spawned-all',
      'sleep 300',
    ].join('\n');
    const parent = await shellPod(script);
    const text = await waitFor(async () => ((await output(parent)).includes('spawned-all') ? output(parent) : undefined), { timeout: 120_000, what: 'the parent to spawn' });
    const children = [...text.matchAll(/spawn \d+: (p-[a-z0-9]+)/g)].map((m) => m[1]);
    expect(children, text).toHaveLength(10);
    expect(text).toMatch(/spawn 11: TOOL_ERROR TOO_MANY_CHILDREN: pod p-[a-z0-9]+ already has 10 active child pods/);
    for (const child of children) expect((await pod(child)).parent_pod_key).toBe(parent);

    await api('POST', `/pods/${parent}/terminate`);
    for (const child of children) {
      const gone = await ended(child, 60_000);
      expect(gone.status).toBe('terminated');
      expect(gone.error_message).toBe(`its parent pod ${parent} ended (terminated)`);
    }
  });
});
