/**
 * The waiting tools of `drover mcp` (docs/mcp.md) against a real server with its local runner,
 * on every database: `channel_wait` answers a message another client posts while it waits (and
 * nothing at its timeout), `pod_wait` answers once a pod has ended (and `ended: false` at its
 * timeout), and `pod_output` then has what the pod printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { parsePrometheusText } from '../helpers/prometheus.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { connectMcp, ok } from './helpers.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'mcp-waits-admin-token-0123456789';

interface Message {
  id: number;
  content: string;
  sender_type: string;
}

describe.each(DATABASES)('drover mcp waits (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;
  let channelId: number;

  const api = async <T>(method: string, urlPath: string, body?: unknown): Promise<T> => {
    const response = await http(server.url, method, `${ORG}${urlPath}`, { key, body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body as T;
  };
  /** Live event-stream subscribers on the server (its /metrics). */
  const subscribers = async () => {
    const response = await http(server.url, 'GET', '/metrics', { bearer: ADMIN_TOKEN });
    expect(response.status, response.text).toBe(200);
    return parsePrometheusText(response.text).value('drover_event_subscribers') ?? 0;
  };
  const mcp = () => connectMcp({ DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key, DROVER_CHANNEL_ID: String(channelId) });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_LOCAL_RUNNER: 'true', DROVER_ADMIN_TOKEN: ADMIN_TOKEN }, localRunner: true });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    channelId = (await api<{ channel: { id: number } }>('POST', '/channels', { name: 'mcp-waits' })).channel.id;
    await waitFor(async () => (await api<{ runners: { status: string }[] }>('GET', '/runners')).runners.find((r) => r.status === 'online'), { timeout: 30_000, what: 'the local runner' });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
  });

  it('channel_wait answers the message another client posts while it waits', async () => {
    // The server has the event stream, so the waits run on it (a 404 would make them poll instead).
    const idle = await subscribers();
    const stream = await fetch(`${server.url}${ORG}/events?types=message.created&channel_id=${channelId}`, { headers: { 'x-api-key': key } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.body?.cancel();
    await waitFor(async () => (await subscribers()) === idle, { what: 'the probing stream to be closed' });
    const client = await mcp();
    const before = await api<{ message: Message }>('POST', `/channels/${channelId}/messages`, { content: 'before the wait' });
    // `after` names the last message before the wait, so the answer does not depend on whether the
    // post below lands before or after the wait has subscribed (it is meant to land after).
    const waiting = ok<{ messages: Message[]; timed_out: boolean }>(client, 'channel_wait', { after: before.message.id, timeout_sec: 60 });
    // The wait has subscribed to the server's event stream: the post below lands while it waits.
    await waitFor(async () => (await subscribers()) > idle, { what: 'channel_wait to subscribe' });
    const posted = await api<{ message: Message }>('POST', `/channels/${channelId}/messages`, { content: 'answer from elsewhere' });
    const answer = await waiting;
    expect(answer.timed_out).toBe(false);
    expect(answer.messages.map((m) => m.content)).toEqual(['answer from elsewhere']);
    expect(answer.messages[0]).toMatchObject({ id: posted.message.id, sender_type: 'api' });
  });

  it('channel_wait with after answers at once what is already newer; at its timeout it answers no message', async () => {
    const client = await mcp();
    const first = await api<{ message: Message }>('POST', `/channels/${channelId}/messages`, { content: 'one' });
    await api('POST', `/channels/${channelId}/messages`, { content: 'two' });
    const already = await ok<{ messages: Message[]; timed_out: boolean }>(client, 'channel_wait', { after: first.message.id, timeout_sec: 5 });
    expect(already).toMatchObject({ timed_out: false });
    expect(already.messages.map((m) => m.content)).toEqual(['two']);
    const quiet = await ok<{ messages: Message[]; timed_out: boolean }>(client, 'channel_wait', { timeout_sec: 2 });
    expect(quiet).toEqual({ messages: [], timed_out: true });
  });

  it('pod_spawn, pod_wait until the shell pod ends, then pod_output; pod_wait at its timeout answers ended false', async () => {
    const client = await mcp();
    const spawned = await ok<{ pod: { pod_key: string } }>(client, 'pod_spawn', { agent_slug: 'shell', prompt: 'sleep 2; echo "the child is done"' });
    const waited = await ok<{ pod: { key: string; status: string; exit_code: number }; ended: boolean }>(client, 'pod_wait', { pod_key: spawned.pod.pod_key, timeout_sec: 120 });
    expect(waited).toMatchObject({ ended: true, pod: { key: spawned.pod.pod_key, status: 'completed', exit_code: 0 } });
    expect((await ok<{ output: string }>(client, 'pod_output', { pod_key: spawned.pod.pod_key })).output).toBe('the child is done\n');

    const long = await ok<{ pod: { pod_key: string } }>(client, 'pod_spawn', { agent_slug: 'shell', prompt: 'sleep 120' });
    const notYet = await ok<{ pod: { status: string }; ended: boolean }>(client, 'pod_wait', { pod_key: long.pod.pod_key, timeout_sec: 2 });
    expect(notYet.ended).toBe(false);
    expect(['queued', 'initializing', 'running']).toContain(notYet.pod.status);
    await ok(client, 'pod_terminate', { pod_key: long.pod.pod_key });
    const ended = await ok<{ pod: { status: string }; ended: boolean }>(client, 'pod_wait', { pod_key: long.pod.pod_key, timeout_sec: 60 });
    expect(ended).toMatchObject({ ended: true, pod: { status: 'terminated' } });
  });
});
