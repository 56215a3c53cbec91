/**
 * The network walls of pods (docs/runners.md "Network"), with a REAL server, a REAL runner and
 * REAL bubblewrap on every database: a pod has its own network namespace and reaches only what
 * its runner exposes to it (its egress proxy, the Drover API, the operator's allowed loopback
 * services); the proxy lets through only allowed host:port, checked after resolution.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http as request, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_network_walls_admin_token_0123456789abcd';

/** A loopback HTTP listener that counts what reaches it. */
async function listener(): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.end('reached\n');
  });
  server.on('connection', () => hits++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    hits: () => hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.each(DATABASES)('network walls of pods (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  let allowed: Awaited<ReturnType<typeof listener>>;
  let denied: Awaited<ReturnType<typeof listener>>;
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('network');
    allowed = await listener();
    denied = await listener();
    // Generous start-up times: the machines this runs on are shared and often loaded.
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' }, timeoutMs: 90_000 });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunnerProcess({
      server: server.url,
      token: await c.registrationToken(),
      workDir: path.join(scratch, 'runner'),
      name: 'walled',
      maxPods: 4,
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_ALLOW_HOSTS: `127.0.0.1:${allowed.port}` },
      timeoutMs: 90_000,
    });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'runner online', timeout: 60_000 });
  }, 240_000);

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    await allowed?.close();
    await denied?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const run = async (script: string, ...directives: string[]) => {
    const key = await c.createPod(script, undefined, ...directives);
    const pod = await c.waitStatus(key, ['completed', 'failed'], 60_000);
    return { key, pod, output: await c.output(key) };
  };

  // curl's own code for "connection refused/failed" is 7; %{http_code} / %{http_connect} show what a proxy answered.
  const direct = (port: number) => `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/ ; echo "direct-${port}=$?"`;
  const viaProxy = (target: string) => `curl -s -m 5 --noproxy '' -o /dev/null -w 'proxy-${target}=%{http_code}/%{http_connect}\\n' -x "$HTTP_PROXY" http://${target}/`;
  const tunnel = (target: string) => `curl -s -m 5 --noproxy '' -o /dev/null -w 'tunnel-${target}=%{http_connect}\\n' -x "$HTTPS_PROXY" https://${target}/`;

  it('reaches the loopback service its runner allows, directly and through the proxy; nothing else of the host: another listener, PostgreSQL, the metadata address', async () => {
    const before = denied.hits();
    const script = [
      direct(allowed.port),
      direct(denied.port),
      direct(5432),
      viaProxy(`127.0.0.1:${allowed.port}`),
      viaProxy(`127.0.0.1:${denied.port}`),
      tunnel('127.0.0.1:5432'),
      viaProxy('169.254.169.254'),
      viaProxy('169.254.169.254'),
      'echo "env=$HTTP_PROXY $NO_PROXY"',
    ].join('\n');
    const { key, pod, output } = await run(script);
    expect(pod.status, output).toBe('completed');
    expect(output).toContain('reached');
    expect(output).toContain(`direct-${allowed.port}=0`);
    expect(output).toContain(`direct-${denied.port}=7`);
    expect(output).toContain('direct-5432=7');
    expect(output).toContain(`proxy-127.0.0.1:${allowed.port}=200/`);
    expect(output).toContain(`proxy-127.0.0.1:${denied.port}=403/`);
    expect(output).toContain('tunnel-127.0.0.1:5432=403');
    expect(output).toContain('proxy-169.254.169.254=403/');
    expect(output).toMatch(/env=http:\/\/127\.0\.0\.1:\d+ localhost,127\.0\.0\.1/);
    expect(denied.hits()).toBe(before);
    // One line per refused host:port, however often it was tried; every refusal counted.
    expect(output.match(/\[drover\] network: refused 169\.254\.169\.254:80 \(not allowed\)/g)).toHaveLength(1);
    expect(output).toContain(`[drover] network: refused 127.0.0.1:${denied.port} (not allowed)`);
    expect(output).toContain('[drover] network: refused 127.0.0.1:5432 (not allowed)');
    const detail = (await c.api('GET', `${ORG}/pods/${key}`)).body as { pod: { network: { mode: string; allow: string[]; refused: number } } };
    expect(detail.pod.network).toEqual({ mode: 'restricted', allow: [], refused: 4 });
  }, 90_000);

  it('the pod token posts a channel message through DROVER_API_URL, which needs no proxy', async () => {
    const created = await c.api('POST', `${ORG}/channels`, { name: `walls-${kind}` });
    expect(created.status, created.text).toBe(201);
    const channelId = (created.body as { channel: { id: number } }).channel.id;
    const script = [
      `curl -sS -m 10 --noproxy '*' -o /dev/null -w 'post=%{http_code}\\n' -H "Authorization: Bearer $DROVER_POD_TOKEN" -H 'content-type: application/json' \\`,
      `  -d '{"content":"hello from behind the walls"}' "$DROVER_API_URL/api/v1/ext/orgs/$DROVER_ORG/channels/${channelId}/messages"`,
    ].join('\n');
    const { pod, output } = await run(script);
    expect(pod.status, output).toBe('completed');
    expect(output).toContain('post=201');
    const messages = (await c.api('GET', `${ORG}/channels/${channelId}/messages`)).body as { messages: { content: string }[] };
    expect(messages.messages.map((m) => m.content)).toContain('hello from behind the walls');
  }, 90_000);

  it('CONFIG network = none reaches nothing: no proxy, not even the loopback service the runner allows', async () => {
    const script = [direct(allowed.port), 'echo "proxy=[${HTTP_PROXY:-}]"', `curl -s -m 5 -o /dev/null -x http://127.0.0.1:3128 http://127.0.0.1:${allowed.port}/; echo "viaport=$?"`].join('\n');
    const { key, pod, output } = await run(script, 'CONFIG network = none');
    expect(pod.status, output).toBe('completed');
    expect(output).toContain(`direct-${allowed.port}=7`);
    expect(output).toContain('proxy=[]');
    expect(output).toContain('viaport=7');
    const detail = (await c.api('GET', `${ORG}/pods/${key}`)).body as { pod: { network: { mode: string } } };
    expect(detail.pod.network.mode).toBe('none');
  }, 90_000);

  it('ALLOW widens a pod (a public address is then tried, not refused); the organization network_allow too', async () => {
    // 203.0.113.0/24 (TEST-NET-3) counts as public. Whatever the machine's network then does with
    // the allowed CONNECT (connects, 502, times out), it is not the proxy's 403.
    const script = tunnel('203.0.113.7:443');
    const narrow = await run(script);
    expect(narrow.output).toContain('tunnel-203.0.113.7:443=403');
    const wide = await run(script, 'ALLOW 203.0.113.7');
    expect(wide.output).toMatch(/tunnel-203\.0\.113\.7:443=(?!403)\d{3}/);
    expect(wide.output).not.toContain('refused 203.0.113.7');

    const patched = await request(server.url, 'PATCH', '/api/v1/admin/orgs/default', { bearer: ADMIN_TOKEN, body: { network_allow: ['203.0.113.7:443', '*.Example.COM'] } });
    expect(patched.status, patched.text).toBe(200);
    expect((patched.body as { org: { network_allow: string[] } }).org.network_allow).toEqual(['203.0.113.7:443', '*.example.com:443']);
    const byOrg = await run(script);
    expect(byOrg.output).toMatch(/tunnel-203\.0\.113\.7:443=(?!403)\d{3}/);
    const cleared = await request(server.url, 'PATCH', '/api/v1/admin/orgs/default', { bearer: ADMIN_TOKEN, body: { network_allow: [] } });
    expect((cleared.body as { org: { network_allow: string[] } }).org.network_allow).toEqual([]);
  }, 120_000);

  it('a spawned pod cannot widen past its parent: an ALLOW its parent lacks, or a more open mode, is 400', async () => {
    const spawn = (name: string, layer: string) =>
      `curl -sS -m 10 --noproxy '*' -o /dev/null -w '${name}=%{http_code}\\n' -H "Authorization: Bearer $DROVER_POD_TOKEN" -H 'content-type: application/json' ` +
      `-d '${JSON.stringify({ agent_slug: 'shell', agentfile_layer: layer })}' "$DROVER_API_URL/api/v1/ext/orgs/$DROVER_ORG/pods"`;
    const script = [
      spawn('wider', 'ALLOW other.example.org\nPROMPT "true"'),
      spawn('open', 'CONFIG network = open\nPROMPT "true"'),
      spawn('same', 'ALLOW api.example.org:8443\nPROMPT "true"'),
    ].join('\n');
    const { pod, output } = await run(script, 'ALLOW api.example.org:8443');
    expect(pod.status, output).toBe('completed');
    expect(output).toContain('wider=400');
    expect(output).toContain('open=400');
    expect(output).toContain('same=201');
  }, 90_000);

  it('PATCH /admin/orgs network_allow: bad entries are 400 naming the entry, nothing is written; an API key is refused', async () => {
    for (const bad of [['not a host'], ['x.example:0'], ['x.example:70000'], ['*.127.0.0.1'], [''], ['a'.repeat(300)], [42]]) {
      const response = await request(server.url, 'PATCH', '/api/v1/admin/orgs/default', { bearer: ADMIN_TOKEN, body: { network_allow: bad } });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect((response.body as { code: string }).code).toBe('VALIDATION_FAILED');
    }
    const tooMany = Array.from({ length: 201 }, (_, i) => `h${i}.example.com`);
    expect((await request(server.url, 'PATCH', '/api/v1/admin/orgs/default', { bearer: ADMIN_TOKEN, body: { network_allow: tooMany } })).status).toBe(400);
    const listed = await request(server.url, 'GET', '/api/v1/admin/orgs', { bearer: ADMIN_TOKEN });
    expect((listed.body as { orgs: { slug: string; network_allow: string[] }[] }).orgs.find((o) => o.slug === 'default')!.network_allow).toEqual([]);
    const withKey = await request(server.url, 'PATCH', '/api/v1/admin/orgs/default', { key: apiKey, body: { network_allow: ['x.example.com'] } });
    expect(withKey.status).toBe(401);
  });
});
