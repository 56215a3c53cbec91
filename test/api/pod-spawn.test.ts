/**
 * Pods that spawn pods with their own token (docs/mcp.md): the pod token's scopes, `whoami`,
 * `parent_pod_key`, the depth limit (3 levels below a pod created through the API), the fan-out
 * limit (10 active children), inheritance of channel and ticket, terminating only one's own
 * children, and children terminated when their parent ends, whichever way. Runners are rows (no
 * process): pods stay `initializing` until a test moves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podFinished } from '../../src/domain/pods/lifecycle.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertRunner } from '../helpers/runners.ts';

interface Pod {
  key: string;
  status: string;
  parent_pod_key: string | null;
  channel_id: number | null;
  ticket_slug: string | null;
  error_message: string | null;
}

describe.each(DATABASES)('pods spawned by pods on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;

  const post = (path: string, payload: Record<string, unknown>, key?: string) => t.request({ method: 'POST', url: t.path(path), key, payload });
  const get = async (key: string): Promise<Pod> => {
    const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}`) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { pod: Pod }).pod;
  };
  const tokenOf = async (key: string) => t.secrets.decrypt((await t.store.db.selectFrom('pods').select('token_encrypted').where('key', '=', key).executeTakeFirstOrThrow()).token_encrypted);
  /** A pod created with `key` (default: the API key); its key. */
  const spawn = async (payload: Record<string, unknown>, key?: string): Promise<string> => {
    const res = await post('/pods', payload, key);
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { pod: { pod_key: string } }).pod.pod_key;
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t.store, t.org.id, { max_pods: 1000 });
  });
  afterAll(() => t?.close());

  it('whoami answers an API key and a pod token with their scopes; the pod token holds the scopes of docs/mcp.md', async () => {
    const res = await t.request({ method: 'GET', url: t.path('/auth/whoami') });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().principal).toMatchObject({ type: 'api_key', pod_key: null });
    expect(res.json().principal.scopes).toContain('loops:write');
    const narrow = await t.issueKey(['tickets:read']);
    const asNarrow = await t.request({ method: 'GET', url: t.path('/auth/whoami'), key: narrow.key });
    expect(asNarrow.json().principal).toEqual({ type: 'api_key', scopes: ['tickets:read'], api_key_id: narrow.id, pod_key: null, user: null });

    const pod = await spawn({ agent_slug: 'shell' });
    const asPod = await t.request({ method: 'GET', url: t.path('/auth/whoami'), key: await tokenOf(pod) });
    expect(asPod.statusCode, asPod.body).toBe(200);
    expect(asPod.json().principal).toMatchObject({ type: 'pod', pod_key: pod, api_key_id: null });
    expect([...asPod.json().principal.scopes].sort()).toEqual(['channels:write', 'loops:read', 'pods:read', 'pods:write', 'repos:read', 'runners:read', 'tickets:write']);
    expectError(await t.request({ method: 'GET', url: t.path('/auth/whoami'), key: null }), 401, 'AUTH_REQUIRED');
    expectError(await t.request({ method: 'GET', url: t.path('/auth/whoami', 'elsewhere') }), 404, 'NOT_FOUND');
  });

  it('a child records its parent, inherits its channel and ticket unless given, and may be terminated by its parent only', async () => {
    const channel = (await post('/channels', { name: 'spawn-inherit' })).json().channel.id as number;
    const other = (await post('/channels', { name: 'spawn-other' })).json().channel.id as number;
    const ticket = (await post('/tickets', { type: 'task', title: 'parent task' })).json().ticket.slug as string;
    const ownTicket = (await post('/tickets', { type: 'task', title: 'child task' })).json().ticket.slug as string;
    const parent = await spawn({ agent_slug: 'shell', ticket_slug: ticket, agentfile_layer: `CONFIG channel_id = ${channel}` });
    const token = await tokenOf(parent);

    const inheriting = await spawn({ agent_slug: 'shell', agentfile_layer: 'PROMPT "echo child"' }, token);
    expect(await get(inheriting)).toMatchObject({ parent_pod_key: parent, channel_id: channel, ticket_slug: ticket });
    const given = await spawn({ agent_slug: 'shell', ticket_slug: ownTicket, agentfile_layer: `CONFIG channel_id = ${other}` }, token);
    expect(await get(given)).toMatchObject({ parent_pod_key: parent, channel_id: other, ticket_slug: ownTicket });
    expect((await get(parent)).parent_pod_key).toBeNull();

    // A sibling's token cannot terminate its sibling; the parent's can; an API key can terminate any pod.
    expectError(await post(`/pods/${given}/terminate`, {}, await tokenOf(inheriting)), 403, 'INSUFFICIENT_SCOPE');
    const stopped = await post(`/pods/${given}/terminate`, {}, token);
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect((await get(given)).status).toBe('terminated');
    expectError(await post(`/pods/${given}/terminate`, {}, token), 409, 'POD_NOT_ACTIVE');
    expect((await post(`/pods/${inheriting}/terminate`, {})).statusCode).toBe(200);
    expect((await get(parent)).status).toBe('initializing');
  });

  it('a child names only CREDENTIALs its parent has (400 otherwise): a pod token cannot widen what reaches its agents', async () => {
    const parent = await spawn({ agent_slug: 'shell', agentfile_layer: 'CREDENTIAL GITHUB_TOKEN' });
    const token = await tokenOf(parent);
    const refused = expectError(await post('/pods', { agent_slug: 'shell', agentfile_layer: 'CREDENTIAL GITHUB_TOKEN\nCREDENTIAL AWS_SECRET_ACCESS_KEY' }, token), 400, 'VALIDATION_FAILED');
    expect(refused.error).toMatch(/AWS_SECRET_ACCESS_KEY: a spawned pod may name only the credentials of its parent pod/);
    expect(refused.error).not.toMatch(/GITHUB_TOKEN,/);
    const child = await spawn({ agent_slug: 'shell', agentfile_layer: 'CREDENTIAL GITHUB_TOKEN' }, token);
    expect((await get(child)).parent_pod_key).toBe(parent);
    // An API key names any credential, as before.
    await spawn({ agent_slug: 'shell', agentfile_layer: 'CREDENTIAL AWS_SECRET_ACCESS_KEY' });
  });

  it('goes at most 3 levels below a pod created through the API (409 SPAWN_DEPTH_EXCEEDED)', async () => {
    const root = await spawn({ agent_slug: 'shell' });
    let current = root;
    for (let level = 1; level <= 3; level++) current = await spawn({ agent_slug: 'shell' }, await tokenOf(current));
    const count = await t.store.db.selectFrom('pods').select('id').execute();
    const refused = expectError(await post('/pods', { agent_slug: 'shell' }, await tokenOf(current)), 409, 'SPAWN_DEPTH_EXCEEDED');
    expect(refused.error).toMatch(/3 levels/);
    expect(await t.store.db.selectFrom('pods').select('id').execute()).toHaveLength(count.length);
  });

  it('has at most 10 active children per pod (409 TOO_MANY_CHILDREN); an ended child frees its place', async () => {
    const parent = await spawn({ agent_slug: 'shell' });
    const token = await tokenOf(parent);
    const children: string[] = [];
    for (let i = 0; i < 10; i++) children.push(await spawn({ agent_slug: 'shell' }, token));
    const refused = expectError(await post('/pods', { agent_slug: 'shell' }, token), 409, 'TOO_MANY_CHILDREN');
    expect(refused.error).toMatch(/at most 10/);
    expect((await post(`/pods/${children[0]}/terminate`, {}, token)).statusCode).toBe(200);
    children.push(await spawn({ agent_slug: 'shell' }, token));
    expect((await get(children[10])).parent_pod_key).toBe(parent);
  });

  it('terminates the still-active children (and theirs) when a pod ends: terminated through the API, or finished on its runner', async () => {
    const parent = await spawn({ agent_slug: 'shell' });
    const child = await spawn({ agent_slug: 'shell' }, await tokenOf(parent));
    const grandchild = await spawn({ agent_slug: 'shell' }, await tokenOf(child));
    const finishedChild = await spawn({ agent_slug: 'shell' }, await tokenOf(parent));
    await podFinished(t.ctx, runnerId, { key: finishedChild, outcome: 'completed', exit_code: 0, error_message: null, session_id: null });
    expect((await post(`/pods/${parent}/terminate`, {})).statusCode).toBe(200);
    for (const key of [child, grandchild]) {
      const pod = await get(key);
      expect(pod.status).toBe('terminated');
      expect(pod.error_message).toMatch(/parent pod p-[a-z0-9]+ ended \(terminated\)/);
    }
    expect((await get(finishedChild)).status).toBe('completed');

    // The same when the parent completes on its runner.
    const second = await spawn({ agent_slug: 'shell' });
    const secondChild = await spawn({ agent_slug: 'shell' }, await tokenOf(second));
    await podFinished(t.ctx, runnerId, { key: second, outcome: 'completed', exit_code: 0, error_message: null, session_id: null });
    expect(await get(secondChild)).toMatchObject({ status: 'terminated', error_message: `its parent pod ${second} ended (completed)` });
  });
});
