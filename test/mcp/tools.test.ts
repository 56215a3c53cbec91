/**
 * `drover mcp` (docs/mcp.md) as a real child process, driven by the SDK's Client over stdio,
 * against a real `drover serve` with its local runner, on every database: every tool's happy
 * path, tools hidden by the credential's scopes, API errors (404, 400) as tool errors carrying
 * the API's code and message, the channel default (DROVER_CHANNEL_ID) and report_status.
 * The waiting tools have their own file (waits.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { callTool, connectMcp, ok, refused } from './helpers.ts';

const ADMIN_TOKEN = 'drvadm_mcp_tools_admin_token_0123456789abcdef';
const ORG = '/api/v1/ext/orgs/default';

const ALL_TOOLS = [
  'channel_list', 'channel_read', 'channel_post', 'channel_wait', 'channel_document_get', 'channel_document_update',
  'ticket_search', 'ticket_get', 'ticket_create', 'ticket_update', 'ticket_set_status',
  'pod_spawn', 'pod_status', 'pod_output', 'pod_wait', 'pod_terminate',
  'loop_list', 'loop_trigger', 'repository_list', 'runner_list',
].sort();

describe.each(DATABASES)('drover mcp tools against a real server (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;
  let channelId: number;
  let scratch: string;

  const api = async <T>(method: string, urlPath: string, body?: unknown, status = method === 'POST' ? 201 : 200): Promise<T> => {
    const response = await http(server.url, method, `${ORG}${urlPath}`, { key, body });
    expect(response.status, response.text).toBe(status);
    return response.body as T;
  };
  const mcp = (extra: Record<string, string> = {}) => connectMcp({ DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key, ...extra });
  const podEnded = (podKey: string) =>
    waitFor(
      async () => {
        const { pod } = await api<{ pod: { status: string } }>('GET', `/pods/${podKey}`);
        return ['completed', 'failed', 'terminated'].includes(pod.status) ? pod : undefined;
      },
      { timeout: 60_000, what: `pod ${podKey} to end` },
    );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOCAL_RUNNER: 'true' }, localRunner: true });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    channelId = (await api<{ channel: { id: number } }>('POST', '/channels', { name: 'mcp-tools', document: 'first draft' })).channel.id;
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-mcp-tools-'));
    // The local runner connects shortly after the server listens.
    await waitFor(async () => (await api<{ runners: { status: string }[] }>('GET', '/runners')).runners.find((r) => r.status === 'online'), { timeout: 30_000, what: 'the local runner' });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('lists every tool of docs/mcp.md for a key with all scopes, each with an input schema; report_status only inside a pod', async () => {
    const client = await mcp();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description!.length).toBeGreaterThan(10);
    }
    const post = tools.find((t) => t.name === 'channel_post')!;
    expect(post.inputSchema.required).toEqual(['content']);
    expect(client.getServerVersion()?.name).toBe('drover');
  });

  it('a key holding only tickets:read sees only ticket_search and ticket_get', async () => {
    const issued = await http(server.url, 'POST', '/api/v1/admin/orgs/default/api-keys', { bearer: ADMIN_TOKEN, body: { name: 'reader', scopes: ['tickets:read'] } });
    const client = await connectMcp({ DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: (issued.body as { key: string }).key });
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['ticket_get', 'ticket_search']);
    const unknown = await client.callTool({ name: 'channel_post', arguments: { channel_id: channelId, content: 'no' } }).catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }));
    expect(unknown.isError).toBe(true);
    expect((await api<{ messages: unknown[] }>('GET', `/channels/${channelId}/messages`)).messages.some((m) => (m as { content: string }).content === 'no')).toBe(false);
  });

  it('channels: list, post, read (paging with before and after), document get and update; channel_id defaults to DROVER_CHANNEL_ID', async () => {
    const client = await mcp({ DROVER_CHANNEL_ID: String(channelId) });
    const listed = await ok<{ channels: { id: number; name: string }[] }>(client, 'channel_list');
    expect(listed.channels.map((c) => c.name)).toContain('mcp-tools');

    const first = await ok<{ message: { id: number; content: string; sender_type: string } }>(client, 'channel_post', { content: 'one' });
    expect(first.message).toMatchObject({ content: 'one', sender_type: 'api' });
    const second = await ok<{ message: { id: number } }>(client, 'channel_post', { channel_id: channelId, content: 'two' });
    const read = await ok<{ messages: { id: number; content: string }[] }>(client, 'channel_read', { limit: 10 });
    expect(read.messages.map((m) => m.content).slice(0, 2)).toEqual(['two', 'one']);
    expect((await ok<{ messages: { content: string }[] }>(client, 'channel_read', { before: second.message.id })).messages[0].content).toBe('one');
    expect((await ok<{ messages: { content: string }[] }>(client, 'channel_read', { after: first.message.id })).messages.map((m) => m.content)).toEqual(['two']);
    // Exactly what the API answers.
    expect(await ok(client, 'channel_read', { limit: 10 })).toEqual(await api('GET', `/channels/${channelId}/messages?limit=10`));

    expect(await ok(client, 'channel_document_get')).toEqual({ channel_id: channelId, name: 'mcp-tools', document: 'first draft' });
    const updated = await ok<{ channel: { document: string } }>(client, 'channel_document_update', { document: '# Plan\n\n- step one' });
    expect(updated.channel.document).toBe('# Plan\n\n- step one');
    expect((await api<{ channel: { document: string } }>('GET', `/channels/${channelId}`)).channel.document).toBe('# Plan\n\n- step one');
  });

  it('without a channel_id and without DROVER_CHANNEL_ID the channel tools answer a tool error naming channel_id', async () => {
    const client = await mcp();
    const error = await refused(client, 'channel_post', { content: 'where to?' }, 'VALIDATION_FAILED');
    expect(error.error).toMatch(/channel_id is required/);
  });

  it('tickets: create, get, search by status, labels and type, update, set status', async () => {
    const client = await mcp();
    const created = await ok<{ ticket: { slug: string; priority: string } }>(client, 'ticket_create', {
      type: 'bug',
      title: 'MCP found a bug',
      description: 'Steps: call the tool.',
      priority: 'high',
      labels: ['mcp', 'agents'],
    });
    const slug = created.ticket.slug;
    expect(created.ticket.priority).toBe('high');
    const child = await ok<{ ticket: { slug: string; parent_slug: string } }>(client, 'ticket_create', { type: 'task', title: 'Fix it', parent_slug: slug });
    expect(child.ticket.parent_slug).toBe(slug);
    expect((await ok<{ ticket: { description: string } }>(client, 'ticket_get', { slug })).ticket.description).toBe('Steps: call the tool.');

    const found = await ok<{ tickets: { slug: string }[] }>(client, 'ticket_search', { labels: ['mcp', 'agents'], type: 'bug', status: 'backlog' });
    expect(found.tickets.map((t) => t.slug)).toEqual([slug]);
    expect((await ok<{ tickets: unknown[] }>(client, 'ticket_search', { labels: ['mcp', 'nope'] })).tickets).toEqual([]);
    expect((await ok<{ limit: number }>(client, 'ticket_search', { limit: 1 })).limit).toBe(1);

    const updated = await ok<{ ticket: { title: string; labels: string[]; description: string | null } }>(client, 'ticket_update', { slug, title: 'MCP found two bugs', labels: ['mcp'], description: null });
    expect(updated.ticket).toMatchObject({ title: 'MCP found two bugs', labels: ['mcp'], description: null });
    await ok(client, 'ticket_set_status', { slug, status: 'in_progress' });
    expect((await api<{ ticket: { status: string } }>('GET', `/tickets/${slug}`)).ticket.status).toBe('in_progress');
  });

  it('API errors come back as tool errors with the API code, message, status and request id (404, 400)', async () => {
    const client = await mcp();
    const missing = await refused(client, 'ticket_get', { slug: 'NOPE-404' }, 'NOT_FOUND');
    expect(missing).toMatchObject({ error: 'ticket not found', status: 404 });
    expect(missing.request_id).toMatch(/^req_[0-9a-f]{32}$/);
    const raw = await callTool(client, 'ticket_get', { slug: 'NOPE-404' });
    expect(raw.text.split('\n')[0]).toBe('NOT_FOUND: ticket not found');

    const blank = await refused(client, 'ticket_create', { type: 'bug', title: ' ' }, 'VALIDATION_FAILED');
    expect(blank).toMatchObject({ status: 400 });
    expect(JSON.stringify(blank)).toMatch(/title must not be blank/);
    expect((await refused(client, 'pod_spawn', { agent_slug: 'no-such-agent', prompt: 'x' }, 'VALIDATION_FAILED')).error).toMatch(/agent_slug/);
    for (const name of ['LD_PRELOAD', 'GCONV_PATH', 'MALLOC_PERTURB_', 'TMPDIR']) {
      const layer = `ENV ${name} "/w/evil.so"`;
      expect((await refused(client, 'pod_spawn', { agent_slug: 'shell', prompt: 'x', agentfile_layer: layer }, 'VALIDATION_FAILED')).error).toContain(`ENV ${name} is not allowed`);
    }
    await refused(client, 'channel_read', { channel_id: 999_999 }, 'NOT_FOUND');
    await refused(client, 'pod_status', { pod_key: 'p-nothere' }, 'NOT_FOUND');
    await refused(client, 'loop_trigger', { slug: 'no-loop' }, 'NOT_FOUND');

    // Input the tool's own schema refuses never reaches the API.
    const outOfRange = await client.callTool({ name: 'channel_wait', arguments: { channel_id: channelId, timeout_sec: 301 } });
    expect(outOfRange.isError).toBe(true);
  });

  it('pods: spawn a shell pod, its status and output; terminate a long one', async () => {
    const client = await mcp();
    const spawned = await ok<{ pod: { pod_key: string; status: string; agent_slug: string } }>(client, 'pod_spawn', {
      agent_slug: 'shell',
      prompt: 'echo "hello from a spawned pod"\necho "quotes \\" and \\\\ survive"',
      agentfile_layer: 'CONFIG pod_timeout_minutes = 5',
      channel_id: channelId,
    });
    expect(spawned.pod.agent_slug).toBe('shell');
    const podKey = spawned.pod.pod_key;
    await podEnded(podKey);
    const status = await ok<{ pod: { status: string; channel_id: number; parent_pod_key: string | null; pod_timeout_minutes: number } }>(client, 'pod_status', { pod_key: podKey });
    expect(status.pod).toMatchObject({ status: 'completed', channel_id: channelId, parent_pod_key: null, pod_timeout_minutes: 5 });
    const output = await ok<{ output: string; truncated: boolean }>(client, 'pod_output', { pod_key: podKey });
    expect(output.output).toContain('hello from a spawned pod\nquotes " and \\ survive\n');
    expect((await ok<{ output: string; truncated: boolean }>(client, 'pod_output', { pod_key: podKey, tail_bytes: 7 })).output).toBe('urvive\n'.slice(-7));

    const long = await ok<{ pod: { pod_key: string } }>(client, 'pod_spawn', { agent_slug: 'shell', prompt: 'sleep 120' });
    const stopped = await ok<{ message: string }>(client, 'pod_terminate', { pod_key: long.pod.pod_key });
    expect(stopped.message).toContain(long.pod.pod_key);
    expect((await podEnded(long.pod.pod_key)).status).toBe('terminated');
    await refused(client, 'pod_terminate', { pod_key: long.pod.pod_key }, 'POD_NOT_ACTIVE');
  });

  it('loops, repositories and runners: loop_list, loop_trigger, repository_list, runner_list', async () => {
    const client = await mcp();
    await api('POST', '/loops', { name: 'MCP loop', slug: 'mcp-loop', prompt_template: 'echo "loop says {{word}}"', agent_slug: 'shell' });
    expect((await ok<{ loops: { slug: string }[] }>(client, 'loop_list')).loops.map((l) => l.slug)).toContain('mcp-loop');
    const run = await ok<{ run: { id: number; status: string } }>(client, 'loop_trigger', { slug: 'mcp-loop', variables: { word: 'hi' } });
    expect(run.run.id).toBeGreaterThan(0);
    await http(server.url, 'POST', '/api/v1/admin/orgs/default/repositories', { bearer: ADMIN_TOKEN, body: { name: 'mcp-repo', full_name: 'acme/mcp-repo', provider: 'git', url: 'https://git.example.invalid/acme/mcp-repo.git' } });
    expect((await ok<{ repositories: { name: string }[] }>(client, 'repository_list')).repositories.map((r) => r.name)).toContain('mcp-repo');
    const runners = await ok<{ runners: { status: string; agents: { slug: string }[] }[] }>(client, 'runner_list');
    expect(runners.runners.length).toBeGreaterThan(0);
    expect(runners.runners[0].agents.map((a) => a.slug)).toContain('shell');
  });

  it('report_status writes the pod status file the runner reads, one JSON line', async () => {
    const statusFile = path.join(scratch, 'status.json');
    const client = await mcp({ DROVER_STATUS_FILE: statusFile });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('report_status');
    await ok(client, 'report_status', { status: 'done', summary: 'All tests pass.' });
    expect(JSON.parse(fs.readFileSync(statusFile, 'utf8'))).toEqual({ status: 'done', summary: 'All tests pass.' });
    const bad = await client.callTool({ name: 'report_status', arguments: { status: 'finished', summary: 'x' } });
    expect(bad.isError).toBe(true);
  });
});
