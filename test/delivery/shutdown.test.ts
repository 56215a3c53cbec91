/**
 * A merge request being opened when the server stops (docs/agents.md "Getting the work back"): the
 * stop waits for it (bounded), and it is recorded on the pod's delivery before the store closes.
 * A pushed pod with `CONFIG deliver = merge_request` on a GitHub repository whose API is a stand-in
 * that answers the create call only once the stopping server says it is waiting for it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { afterDelivery } from '../../src/domain/deliveries/merge-requests.ts';
import { parseDelivery, PENDING_DELIVERY } from '../../src/domain/deliveries/model.ts';
import * as pods from '../../src/store/pods.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';
import { waitFor } from '../helpers/runner-process.ts';

const TOKEN = 'ghp_ShutdownTokenOfTheRepo_42';
const SHA = 'a'.repeat(40);

describe.each(DATABASES)('a merge request in flight at shutdown (%s)', (kind) => {
  let t: TestApp | null = null;
  let provider: http.Server | null = null;

  afterEach(async () => {
    provider?.closeAllConnections();
    provider?.close();
    await t?.close();
    t = null;
  });

  it('the server’s stop waits for it and it is recorded', async () => {
    const lines: { msg?: string }[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as { msg?: string });
          callback();
        },
      }),
    );
    const creates: string[] = [];
    provider = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const send = (status: number, value: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
        if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, {});
        if (req.method === 'GET') return send(200, []);
        creates.push(body);
        // Answered only once the stopping server waits for it.
        void waitFor(() => lines.some((l) => l.msg === 'waiting for merge requests being opened'), { timeout: 30_000, what: 'the server to wait for the merge request' }).then(
          () => send(201, { number: 7, html_url: 'http://mr.test/acme/app/pull/7', state: 'open', head: { ref: 'drover/work' } }),
          () => send(500, {}),
        );
      });
    });
    await new Promise<void>((resolve) => provider!.listen(0, '127.0.0.1', resolve));
    const apiBase = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    const app = await startTestApp(kind, { logger });
    t = app;
    const created = await app.request({
      method: 'POST',
      url: `/api/v1/admin/orgs/${app.org.slug}/repositories`,
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: 'app', full_name: 'acme/app', provider: 'github', url: 'https://github.example/acme/app.git', default_branch: 'main', token: TOKEN, api_base_url: apiBase },
    });
    expect(created.statusCode, created.body).toBe(201);
    const repositoryId = (JSON.parse(created.body) as { repository: { id: number } }).repository.id;
    const runnerId = await insertRunner(app.store, app.org.id);
    const delivery = { ...PENDING_DELIVERY, status: 'pushed', branch: 'drover/work', base_commit: SHA, head_commit: 'b'.repeat(40), commits: [{ sha: 'b'.repeat(40), subject: 'Work' }], files_changed: 1, insertions: 1 };
    const pod = await insertPodRow(app.store, app.org.id, runnerId, {
      status: 'completed',
      desired_state: 'stop',
      repository_id: repositoryId,
      result: 'Did the work',
      config: JSON.stringify({ ...JSON.parse((await insertPodRow(app.store, app.org.id, runnerId)).config), deliver: 'merge_request' }),
      delivery: JSON.stringify(delivery),
    });
    await afterDelivery(app.ctx, pod);
    await waitFor(() => creates.length === 1, { timeout: 15_000, what: 'the merge request to be asked for' });

    await app.app.close();
    // Recorded before the stop returned: the store (closed next by a real server) holds it.
    const after = parseDelivery((await pods.findPodByKey(app.store.db, pod.key))!.delivery);
    expect(after).toMatchObject({ status: 'pushed', error: null, merge_request: { id: 7, url: 'http://mr.test/acme/app/pull/7', state: 'opened' } });
    expect(lines.some((l) => l.msg === 'waiting for merge requests being opened')).toBe(true);
  });
});
