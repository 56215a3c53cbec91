/**
 * Hygiene of issue 25 (docs/api.md "Repositories", "Callbacks and repositories"): a local repository path is
 * checked at registration (it must be a git repository); a callback URL the address guard would
 * refuse is 400 at create and update (unless DROVER_WEBHOOK_ALLOW_PRIVATE); a refused callback is
 * not retried.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../src/domain/webhooks/outbox.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';

describe.each(DATABASES)('people hygiene on %s', (kind) => {
  let t: TestApp;
  let dir: string;
  const admin = (method: 'POST' | 'PATCH', url: string, payload: unknown) =>
    t.app.inject({ method, url: `/api/v1/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: payload as object });

  beforeAll(async () => {
    t = await startTestApp(kind);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-hygiene-'));
    execFileSync('git', ['init', '-q', path.join(dir, 'work')]);
    execFileSync('git', ['init', '-q', '--bare', path.join(dir, 'bare.git')]);
    fs.mkdirSync(path.join(dir, 'plain'));
    fs.writeFileSync(path.join(dir, 'file'), 'x');
  });
  afterAll(async () => {
    await t?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('local repository paths', () => {
    const register = (name: string, url: string) => admin('POST', '/orgs/acme/repositories', { name, full_name: `acme/${name}`, provider: 'git', url });
    const count = async () => Number((await t.store.db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    it('accepts a work tree, a bare repository and a file:// URL of one', async () => {
      expect((await register('work', path.join(dir, 'work'))).statusCode).toBe(201);
      expect((await register('bare', path.join(dir, 'bare.git'))).statusCode).toBe(201);
      expect((await register('url', `file://${path.join(dir, 'work')}`)).statusCode).toBe(201);
    });

    it('refuses a missing path, a file, a directory that is no repository: 400 naming the problem, nothing written', async () => {
      const before = await count();
      for (const [url, problem] of [
        [path.join(dir, 'missing'), 'does not exist'],
        [`file://${path.join(dir, 'missing')}`, 'does not exist'],
        [path.join(dir, 'file'), 'not a directory'],
        [path.join(dir, 'plain'), 'not a git repository'],
      ]) {
        const response = await register(`r${Math.random().toString(36).slice(2, 8)}`, url);
        expect(response.statusCode, url).toBe(400);
        expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: '/url' }] });
        expect(response.json().error).toContain(problem);
      }
      expect(await count()).toBe(before);
    });

    it('checks a new URL on update, and leaves remote URLs alone', async () => {
      const created = await register('moving', path.join(dir, 'work'));
      const id = created.json().repository.id as number;
      const moved = await admin('PATCH', `/orgs/acme/repositories/${id}`, { url: path.join(dir, 'missing') });
      expect(moved.statusCode).toBe(400);
      expect((await admin('PATCH', `/orgs/acme/repositories/${id}`, { url: 'https://git.example.invalid/acme/x.git' })).statusCode).toBe(200);
    });
  });

  describe('callback URLs', () => {
    const privateUrls = ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]/hook', 'http://localhost/hook', 'http://0x7f000001/hook'];

    it('a private callback_url is 400 at create and at update; nothing is written', async () => {
      for (const url of privateUrls) {
        const created = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'cb', agent_slug: 'shell', prompt_template: 'x', callback_url: url } });
        expect(created.statusCode, url).toBe(400);
        expect(created.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
        expect(created.json().error).toContain('callback_url');
      }
      expect(Number((await t.store.db.selectFrom('loops').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)).toBe(0);
      const loop = await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'cb', slug: 'cb', agent_slug: 'shell', prompt_template: 'x', callback_url: 'http://93.184.216.34/hook' } });
      expect(loop.statusCode, loop.body).toBe(201);
      for (const url of privateUrls) {
        expect((await t.request({ method: 'PUT', url: t.path('/loops/cb'), payload: { callback_url: url } })).statusCode, url).toBe(400);
      }
      const row = await t.store.db.selectFrom('loops').select('callback_url').where('slug', '=', 'cb').executeTakeFirstOrThrow();
      expect(row.callback_url).toBe('http://93.184.216.34/hook');
    });

    it('DROVER_WEBHOOK_ALLOW_PRIVATE lets them through', async () => {
      const open = await startTestApp(kind, { webhookAllowPrivate: true });
      try {
        const created = await open.request({ method: 'POST', url: open.path('/loops'), payload: { name: 'cb', agent_slug: 'shell', prompt_template: 'x', callback_url: 'http://127.0.0.1:9/hook' } });
        expect(created.statusCode, created.body).toBe(201);
      } finally {
        await open.close();
      }
    });

    it('a delivery the guard refuses fails at once, without retries', async () => {
      // Written straight to the outbox, as a loop's URL stored before this check (or a hostname that resolves privately later) would be.
      const now = Date.now();
      const inserted = await t.store.db
        .insertInto('webhook_deliveries')
        .values({
          org_id: t.org.id,
          event_id: 'msg_refused',
          url: 'http://127.0.0.1:9/hook',
          secret_encrypted: t.secrets.encrypt('whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ='),
          payload: '{}',
          status: 'pending',
          attempts: 0,
          next_attempt_at: now - 1,
          last_status_code: null,
          last_error: null,
          subject_type: 'run',
          subject_id: 1,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const sender = new WebhookSender(t.ctx, { allowPrivate: false, log: pino({ level: 'silent' }), intervalMs: 3_600_000, timeoutMs: 2_000 });
      try {
        expect(await sender.runOnce()).toBe(1);
      } finally {
        await sender.stop();
      }
      const row = await t.store.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', inserted.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'failed', attempts: 1 });
      expect(row.last_error).toContain('DROVER_WEBHOOK_ALLOW_PRIVATE');
    });
  });
});
