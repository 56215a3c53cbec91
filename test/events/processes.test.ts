/**
 * The streams with real processes: `drover serve` with its local runner running a real `shell`
 * pod (the output stream), two `drover serve` replicas on one PostgreSQL (an event written on one
 * reaches a subscriber of the other), and the retention's background pruning (reset).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/runner-process.ts';
import { openStream, parsed, type OpenStream } from '../helpers/sse.ts';

const ORG = '/api/v1/ext/orgs/default';

describe.each(DATABASES)('event and output streams with real processes (%s)', (kind) => {
  let database: TestDatabase | null = null;
  const servers: ServerProcess[] = [];
  const streams: OpenStream[] = [];

  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const server of servers.splice(0)) await server.stop();
    await database?.cleanup();
    database = null;
  });

  async function serve(env: Record<string, string> = {}, localRunner = false): Promise<{ server: ServerProcess; key: string }> {
    database ??= await createProcessTestDatabase(kind);
    const server = await startServerProcess({
      dataDir: database.dataDir,
      localRunner,
      env: { ...database.env, DROVER_ADMIN_TOKEN: 'drvadm_events_test_token_0123456789abcdef', DROVER_LOG_LEVEL: 'warn', ...env },
    });
    servers.push(server);
    const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    return { server, key };
  }

  const stream = async (server: ServerProcess, key: string, url: string, headers: Record<string, string> = {}) => {
    const opened = await openStream(server.url + url, { 'x-api-key': key, ...headers });
    streams.push(opened);
    expect(opened.status).toBe(200);
    return opened;
  };

  it('streams a pod printing 10,000 lines over ~5 s completely and in order, from 0 and from a middle offset, then its end', async () => {
    const { server, key } = await serve({ DROVER_LOCAL_RUNNER: 'true', DROVER_LOCAL_RUNNER_MAX_PODS: '2' }, true);
    await waitFor(async () => {
      const runners = (await http(server.url, 'GET', `${ORG}/runners`, { key })).body as { runners: { status: string }[] };
      return runners.runners.some((r) => r.status === 'online') || undefined;
    }, { timeout: 30_000, what: 'the local runner online' });
    const script = 'for i in $(seq 1 10000); do echo "line $i"; if [ $((i % 1000)) -eq 0 ]; then sleep 0.5; fi; done; exit 7';
    const created = await http(server.url, 'POST', `${ORG}/pods`, { key, body: { agent_slug: 'shell', agentfile_layer: `PROMPT <<END\n${script}\nEND` } });
    expect(created.status, created.text).toBe(201);
    const podKey = (created.body as { pod: { pod_key: string } }).pod.pod_key;

    const live = await stream(server, key, `${ORG}/pods/${podKey}/output/stream`);
    await waitFor(() => (live.messages.at(-1)?.event === 'end' ? true : undefined), { timeout: 60_000, what: 'the end event' });
    await live.ended;
    const outputs = live.messages.filter((m) => m.event === 'output').map((m) => JSON.parse(m.data) as { offset: number; data: string });
    let expectedOffset = 0;
    for (const output of outputs) {
      expect(output.offset).toBe(expectedOffset);
      expectedOffset += Buffer.byteLength(output.data);
    }
    const text = outputs.map((o) => o.data).join('');
    const lines = text.split('\n').filter((line) => line.startsWith('line '));
    expect(lines).toEqual(Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`));
    expect(JSON.parse(live.messages.at(-1)!.data)).toEqual({ status: 'failed', exit_code: 7 });
    expect(live.messages.filter((m) => m.event === 'end')).toHaveLength(1);

    const middle = Buffer.byteLength(text.slice(0, text.indexOf('line 5001\n')));
    const fromMiddle = await stream(server, key, `${ORG}/pods/${podKey}/output/stream?offset=${middle}`);
    await fromMiddle.ended;
    const rest = fromMiddle.messages.filter((m) => m.event === 'output').map((m) => JSON.parse(m.data) as { offset: number; data: string });
    expect(rest[0].offset).toBe(middle);
    expect(rest.map((o) => o.data).join('')).toBe(Buffer.from(text).subarray(middle).toString());
    expect(fromMiddle.messages.at(-1)!.event).toBe('end');
  }, 120_000);

  it('answers a resume from an id older than what is kept with one reset, then goes live', async () => {
    // 0.0005 h = 1.8 s of retention, pruned every 0.18 s.
    const { server, key } = await serve({ DROVER_EVENT_RETENTION_HOURS: '0.0005' });
    const first = await http(server.url, 'POST', `${ORG}/tickets`, { key, body: { type: 'bug', title: 'old' } });
    expect(first.status).toBe(201);
    const watcher = await stream(server, key, `${ORG}/events?types=ticket.created`);
    await http(server.url, 'POST', `${ORG}/tickets`, { key, body: { type: 'bug', title: 'also old' } });
    const [seen] = await watcher.waitFor(1);
    // Once both are older than the retention, the background prune removes them.
    await waitFor(
      async () => {
        const probe = await openStream(`${server.url}${ORG}/events?types=ticket.created`, { 'x-api-key': key, 'last-event-id': String(Number(seen.id) - 1) });
        streams.push(probe);
        const [message] = await probe.waitFor(1, 1_000).catch(() => [undefined]);
        probe.close();
        return message?.event === 'reset' || undefined;
      },
      { timeout: 30_000, what: 'the events to be pruned' },
    );
    const resumed = await stream(server, key, `${ORG}/events?types=ticket.created`, { 'last-event-id': String(Number(seen.id) - 1) });
    const [reset] = await resumed.waitFor(1);
    expect(reset.event).toBe('reset');
    await http(server.url, 'POST', `${ORG}/tickets`, { key, body: { type: 'bug', title: 'new' } });
    const [, live] = await resumed.waitFor(2);
    expect(live.event).toBe('ticket.created');
    expect(parsed(live).data.title).toBe('new');
    expect(resumed.messages.filter((m) => m.event === 'reset')).toHaveLength(1);
  }, 60_000);

  it.runIf(kind === 'postgres')('delivers an event written on one replica to a subscriber of another', async () => {
    const { server: a, key } = await serve();
    const { server: b } = await serve();
    const onB = await stream(b, key, `${ORG}/events?types=ticket.*,channel.created`);
    const onA = await stream(a, key, `${ORG}/events?types=ticket.*,channel.created`);
    const created = await http(a.url, 'POST', `${ORG}/tickets`, { key, body: { type: 'feature', title: 'from A' } });
    expect(created.status).toBe(201);
    const channel = await http(b.url, 'POST', `${ORG}/channels`, { key, body: { name: 'from-b' } });
    expect(channel.status).toBe(201);
    const fromB = (await onB.waitFor(2)).map(parsed);
    const fromA = (await onA.waitFor(2)).map(parsed);
    expect(fromB.map((e) => e.type)).toEqual(['ticket.created', 'channel.created']);
    expect(fromB).toEqual(fromA);
    expect(fromB[0].data.title).toBe('from A');
  }, 60_000);
});
