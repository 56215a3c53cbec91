import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { podFinished } from '../../src/domain/pods/lifecycle.ts';
import { silentRunnersOffline } from '../../src/domain/runners/status.ts';
import { recordEvent } from '../../src/events/writer.ts';
import { DATABASES } from '../helpers/databases.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { insertRunner } from '../helpers/runners.ts';
import { openStream, parsed, type OpenStream } from '../helpers/sse.ts';
import { waitFor } from '../helpers/runner-process.ts';

describe.each(DATABASES)('GET /events (%s)', (kind) => {
  let t: TestApp;
  let base: string;
  const streams: OpenStream[] = [];

  beforeEach(async () => {
    t = await startTestApp(kind);
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await t.close();
  });

  const open = async (query = '', headers: Record<string, string> = {}, key = t.key) => {
    const stream = await openStream(`${base}${t.path('/events')}${query}`, { 'x-api-key': key, ...headers });
    streams.push(stream);
    return stream;
  };
  const api = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
    const response = await t.request({ method, url: t.path(url), payload });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return response.json();
  };

  it('emits each change once, in order, with the resource as the API shows it', async () => {
    const stream = await open();
    const { ticket } = await api('POST', '/tickets', { type: 'bug', title: 'Broken' });
    const { ticket: updated } = await api('PUT', `/tickets/${ticket.slug}`, { title: 'Still broken' });
    const { channel } = await api('POST', '/channels', { name: 'ops' });
    const { channel: renamed } = await api('PUT', `/channels/${channel.id}`, { description: 'operations' });
    const { message } = await api('POST', `/channels/${channel.id}/messages`, { content: 'hello' });
    const { loop } = await api('POST', '/loops', { name: 'Nightly', agent_slug: 'shell', prompt_template: 'echo hi' });
    const { loop: changedLoop } = await api('PUT', `/loops/${loop.slug}`, { description: 'every night' });
    await api('DELETE', `/loops/${loop.slug}`);
    await api('DELETE', `/tickets/${ticket.slug}`);

    const events = (await stream.waitFor(10)).map(parsed);
    // Deleting an enabled loop disables it first (a loop.updated), then deletes it.
    expect(events.map((e) => e.type)).toEqual([
      'ticket.created', 'ticket.updated', 'channel.created', 'channel.updated', 'message.created',
      'loop.created', 'loop.updated', 'loop.updated', 'loop.deleted', 'ticket.deleted',
    ]);
    expect(events[1].data).toEqual(updated);
    expect(events[0].data).toEqual({ ...ticket, description: null, parent_slug: null });
    expect(events[3].data).toEqual(renamed);
    expect(events[2].data).toEqual(channel);
    expect(events[4].data).toEqual(message);
    const { callback_secret: _secret, ...shownLoop } = changedLoop;
    expect(events[6].data).toEqual(shownLoop);
    for (const [i, event] of events.entries()) {
      expect(stream.messages[i].event).toBe(event.type);
      expect(stream.messages[i].id).toBe(String(event.id));
      expect(new Date(event.created_at).toISOString()).toBe(event.created_at);
      if (i > 0) expect(event.id).toBeGreaterThan(events[i - 1].id);
    }
    expect(events[7].data).toMatchObject({ slug: loop.slug, status: 'disabled' });
    expect(events[8].data).toMatchObject({ slug: loop.slug, status: 'disabled' });
    expect(events[9].data).toMatchObject({ slug: ticket.slug, title: 'Still broken' });
  });

  it('emits pod.created and one pod.updated per status change, run events, and runner.updated', async () => {
    const runnerId = await insertRunner(t.store, t.org.id, {}, Date.now());
    const stream = await open('?types=pod.*,runner.updated');
    const { pod } = await api('POST', '/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "echo hi"' });
    await api('POST', `/pods/${pod.pod_key}/terminate`);
    const events = (await stream.waitFor(2)).map(parsed);
    expect(events.map((e) => e.type)).toEqual(['pod.created', 'pod.updated']);
    const { pod: shown } = await api('GET', `/pods/${pod.pod_key}`);
    expect(events[1].data).toEqual(shown);
    expect(events[0].data).toMatchObject({ key: pod.pod_key, status: 'initializing' });

    // The runner reports what the agent used after the pod was terminated: one pod.updated with
    // it (status unchanged); the same report again changes nothing and emits nothing.
    const late = { key: pod.pod_key, outcome: 'terminated' as const, exit_code: 143, error_message: null, session_id: 's-1', result: 'partial', usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: null, cache_write_tokens: null, cost_usd: 0.01, turns: 1 } };
    await podFinished(t.ctx, runnerId, late);
    await podFinished(t.ctx, runnerId, late);
    const reported = parsed((await stream.waitFor(3))[2]);
    expect(reported.type).toBe('pod.updated');
    expect(reported.data).toEqual((await api('GET', `/pods/${pod.pod_key}`)).pod);
    expect(reported.data).toMatchObject({ status: 'terminated', exit_code: 143, result: 'partial' });

    await t.store.db.updateTable('runners').set({ last_heartbeat_at: Date.now() - 60_000 }).where('id', '=', runnerId).execute();
    await silentRunnersOffline(t.ctx, Date.now() - 30_000, Date.now());
    await silentRunnersOffline(t.ctx, Date.now() - 30_000, Date.now()); // no change: no event
    const [, , , runnerEvent] = (await stream.waitFor(4)).map(parsed);
    expect(runnerEvent.type).toBe('runner.updated');
    expect(runnerEvent.data).toEqual((await api('GET', `/runners/${runnerId}`)).runner);
    expect(runnerEvent.data.status).toBe('offline');
  });

  it('emits run.created and run.updated for a loop run', async () => {
    await insertRunner(t.store, t.org.id, {}, Date.now());
    const stream = await open('?types=run.*');
    await api('POST', '/loops', { name: 'Once', slug: 'once', agent_slug: 'shell', prompt_template: 'echo hi' });
    const { run } = await api('POST', '/loops/once/trigger', {});
    const first = (await stream.waitFor(2)).map(parsed);
    expect(first[0].type).toBe('run.created');
    expect(first[0].data).toMatchObject({ id: run.id, loop_slug: 'once' });
    expect(first[1].type).toBe('run.updated');
    await api('POST', `/loops/once/runs/${run.id}/cancel`);
    const shown = (await api('GET', `/loops/once/runs/${run.id}`)).run;
    await stream.waitFor(3);
    const last = parsed(stream.messages.at(-1)!);
    expect(last.data).toEqual(shown);
    expect(shown.status).toBe('cancelled');
  });

  it('emits ticket.updated and channel.updated for what deleting a repository or a user detaches', async () => {
    const admin = async (method: 'POST' | 'DELETE', url: string, payload?: object) => {
      const response = await t.request({ method, url: `/api/v1/admin/orgs/${t.org.slug}${url}`, key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload });
      expect(response.statusCode, response.body).toBeLessThan(300);
      return response.json();
    };
    const { repository } = await admin('POST', '/repositories', { name: 'web', full_name: 'acme/web', provider: 'git', url: 'https://git.example.com/acme/web.git' });
    const { user } = await admin('POST', '/users', { name: 'Ada', email: 'ada@example.com' });
    const { ticket } = await api('POST', '/tickets', { type: 'bug', title: 'Detached', repository_id: repository.id, assignee_id: user.id });
    const { channel } = await api('POST', '/channels', { name: 'web-room', repository_id: repository.id });
    const stream = await open('?types=ticket.updated,channel.updated');

    await admin('DELETE', `/repositories/${repository.id}`);
    const [ticketEvent, channelEvent] = (await stream.waitFor(2)).map(parsed);
    expect(ticketEvent.type).toBe('ticket.updated');
    // GET /tickets/:slug adds the ticket's pods and merge requests (docs/agents.md); events carry the ticket itself.
    const { pods: _pods, merge_requests: _requests, ...detached } = (await api('GET', `/tickets/${ticket.slug}`)).ticket;
    expect(ticketEvent.data).toEqual(detached);
    expect(ticketEvent.data).toMatchObject({ repository_id: null, assignee_id: user.id });
    expect(channelEvent.type).toBe('channel.updated');
    expect(channelEvent.data).toEqual((await api('GET', `/channels/${channel.id}`)).channel);
    expect(channelEvent.data).toMatchObject({ repository_id: null });

    await admin('DELETE', `/users/${user.id}`);
    const unassigned = parsed((await stream.waitFor(3))[2]);
    expect(unassigned.type).toBe('ticket.updated');
    expect(unassigned.data).toMatchObject({ slug: ticket.slug, assignee_id: null });
  });

  it('sends a key only the types its scopes allow: asking for others is 403, unknown types 400', async () => {
    const { key } = await t.issueKey(['tickets:read']);
    const forbidden = await open('?types=ticket.created,pod.*', {}, key);
    expect(forbidden.status).toBe(403);
    expect(forbidden.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scopes: ['pods:read'] });
    const unknown = await open('?types=ticket.exploded');
    expect(unknown.status).toBe(400);
    expect(unknown.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'types' }] });
    const badFamily = await open('?types=nothing.*');
    expect(badFamily.status).toBe(400);
    const badId = await open('', { 'last-event-id': 'abc' });
    expect(badId.status).toBe(400);
    const { key: noRead } = await t.issueKey(['repos:read']);
    expect((await open('', {}, noRead)).status).toBe(403);

    const ticketsOnly = await open('', {}, key);
    await api('POST', '/channels', { name: 'hidden' });
    await api('POST', '/tickets', { type: 'task', title: 'Visible' });
    const [event] = (await ticketsOnly.waitFor(1)).map(parsed);
    expect(event.type).toBe('ticket.created');
    await api('POST', '/tickets', { type: 'task', title: 'Second' });
    await ticketsOnly.waitFor(2);
    expect(ticketsOnly.messages.map((m) => m.event)).toEqual(['ticket.created', 'ticket.created']);
  });

  it('filters by types, channel_id, ticket_slug, pod_key and loop_slug', async () => {
    const { channel: a } = await api('POST', '/channels', { name: 'chan-a' });
    const { channel: b } = await api('POST', '/channels', { name: 'chan-b' });
    const { ticket } = await api('POST', '/tickets', { type: 'bug', title: 'T' });
    const byChannel = await open(`?channel_id=${b.id}`);
    const byTicket = await open(`?ticket_slug=${ticket.slug.toLowerCase()}&types=ticket.*`);
    const messagesOnly = await open('?types=message.created');
    const byLoop = await open('?loop_slug=second');
    await api('POST', `/channels/${a.id}/messages`, { content: 'to a' });
    await api('POST', `/channels/${b.id}/messages`, { content: 'to b' });
    await api('PUT', '/tickets/' + ticket.slug, { status: 'todo' });
    await api('POST', '/tickets', { type: 'bug', title: 'other' });
    await api('POST', '/loops', { name: 'first', slug: 'first', agent_slug: 'shell', prompt_template: 'x' });
    await api('POST', '/loops', { name: 'second', slug: 'second', agent_slug: 'shell', prompt_template: 'x' });
    await api('PUT', `/channels/${b.id}`, { description: 'last' });

    await byChannel.waitFor(2);
    expect(byChannel.messages.map((m) => [m.event, parsed(m).data.channel_id ?? parsed(m).data.id])).toEqual([
      ['message.created', b.id],
      ['channel.updated', b.id],
    ]);
    await byTicket.waitFor(1);
    await messagesOnly.waitFor(2);
    expect(messagesOnly.messages.map((m) => parsed(m).data.content)).toEqual(['to a', 'to b']);
    await byLoop.waitFor(1);
    expect(parsed(byLoop.messages[0]).data.slug).toBe('second');
    // The last change went out after everything the filtered streams might have wrongly shown.
    expect(byTicket.messages.map((m) => [m.event, parsed(m).data.slug])).toEqual([['ticket.updated', ticket.slug]]);
    expect(byLoop.messages).toHaveLength(1);
  });

  it('emits nothing for a change that rolls back', async () => {
    const stream = await open('?types=ticket.*,channel.*');
    await api('POST', '/channels', { name: 'taken' });
    const refused = await t.request({ method: 'POST', url: t.path('/channels'), payload: { name: 'TAKEN' } });
    expect(refused.statusCode).toBe(409);
    await expect(
      t.store.transaction(async (trx) => {
        await recordEvent(t.ctx, trx, t.org.id, 'ticket.created', { title: 'rolled back' }, {});
        throw new Error('the change failed after its event was written');
      }),
    ).rejects.toThrow('failed after');
    await api('POST', '/tickets', { type: 'bug', title: 'kept' });
    await stream.waitFor(2);
    expect(stream.messages.map((m) => [m.event, parsed(m).data.name ?? parsed(m).data.title])).toEqual([
      ['channel.created', 'taken'],
      ['ticket.created', 'kept'],
    ]);
  });

  it('frames what it writes to the socket as HTTP chunks, and as bare frames for an HTTP/1.0 client', async () => {
    const { port } = new URL(base);
    const read = async (version: '1.0' | '1.1') => {
      const socket = net.connect(Number(port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.write(`GET ${t.path('/events')}?types=ticket.created HTTP/${version}\r\nhost: 127.0.0.1\r\nx-api-key: ${t.key}\r\n\r\n`);
      return { socket, text: () => Buffer.concat(chunks).toString('latin1') };
    };
    const [modern, old] = [await read('1.1'), await read('1.0')];
    // A stream starts at the newest event as of its headers (src/api/routes/events.ts): once they
    // are here, what is written next reaches it.
    for (const stream of [modern, old]) await waitFor(() => stream.text().includes('\r\n\r\n'), { what: 'the stream headers' });
    await api('POST', '/tickets', { type: 'task', title: 'framed' });
    await api('POST', '/tickets', { type: 'task', title: 'framed again' });
    for (const stream of [modern, old]) await waitFor(() => (stream.text().match(/event: ticket.created/g) ?? []).length === 2);
    modern.socket.destroy();
    old.socket.destroy();

    const modernText = modern.text();
    const modernHead = modernText.slice(0, modernText.indexOf('\r\n\r\n'));
    expect(modernHead).toMatch(/transfer-encoding: chunked/i);
    // Every chunk's size line matches its data, and the data joined is the SSE text.
    let rest = Buffer.from(modernText.slice(modernHead.length + 4), 'latin1');
    let sse = '';
    while (rest.length > 0) {
      const lineEnd = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, lineEnd).toString(), 16);
      expect(Number.isNaN(size)).toBe(false);
      sse += rest.subarray(lineEnd + 2, lineEnd + 2 + size).toString();
      expect(rest.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString()).toBe('\r\n');
      rest = rest.subarray(lineEnd + 4 + size);
    }
    expect(sse.startsWith('retry: 2000\n\n')).toBe(true);
    expect([...sse.matchAll(/"title":"([^"]+)"/g)].map((m) => m[1])).toEqual(['framed', 'framed again']);

    const oldText = old.text();
    const oldHead = oldText.slice(0, oldText.indexOf('\r\n\r\n'));
    expect(oldHead).toMatch(/^HTTP\/1\.1 200/);
    expect(oldHead).not.toMatch(/transfer-encoding/i);
    const oldBody = oldText.slice(oldText.indexOf('\r\n\r\n') + 4);
    expect(oldBody.startsWith('retry: 2000\n\n')).toBe(true);
    expect([...oldBody.matchAll(/"title":"([^"]+)"/g)].map((m) => m[1])).toEqual(['framed', 'framed again']);
  });

  it('resumes after a disconnect in a burst of 1,000 changes with each event exactly once, in order', async () => {
    const first = await open('?types=ticket.created');
    const creating = (async () => {
      for (let i = 0; i < 1000; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, j) => api('POST', '/tickets', { type: 'task', title: `t${i + j}` })));
      }
    })();
    await first.waitFor(100, 60_000);
    first.close();
    const seen = first.messages.map(parsed);
    const lastId = seen.at(-1)!.id;
    const second = await open(`?types=ticket.created`, { 'last-event-id': String(lastId) });
    await creating;
    await second.waitFor(1000 - seen.length, 60_000);
    const all = [...seen, ...second.messages.map(parsed)];
    expect(all).toHaveLength(1000);
    expect(new Set(all.map((e) => e.id)).size).toBe(1000);
    expect(new Set(all.map((e) => e.data.title)).size).toBe(1000);
    for (let i = 1; i < all.length; i++) expect(all[i].id).toBeGreaterThan(all[i - 1].id);
    // The query form resumes the same way.
    const third = await open(`?types=ticket.created&last_event_id=${all[997].id}`);
    await third.waitFor(2);
    expect(third.messages.map((m) => Number(m.id))).toEqual([all[998].id, all[999].id]);
  }, 120_000);
});
