/**
 * The pod sandbox (docs/runners.md), tried as an attacker would, with REAL processes: `drover serve`
 * with its local runner (whose work dir lies inside the server's data dir) and an external
 * `drover runner` on the same machine, both with the default sandbox (bwrap), on every database.
 *
 * From a `shell` pod on each runner, a probe script tries what was found possible before the
 * sandbox: reading the admin token, the secret key, the database, the runner's credential and
 * `credentials.json`, another pod's workspace and HOME, the clone cache's configuration; writing
 * outside the workspace, HOME and /tmp. Each attempt prints `ok:<name>` when it fails and
 * `LEAK:<name>` when it succeeds. What must work works: the agent is not root, its workspace, HOME
 * and /tmp are writable, git works in its checkout, and the pod token reaches the server.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { bareRepository } from '../helpers/git-fixture.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const NAMED = 'named-credential-value-1234';
const UNNAMED = 'unnamed-credential-value-5678';
const FROM_ENV = 'env-credential-value-9012';

/** A check: a shell condition that is true when the attack worked. */
const attempt = (name: string, condition: string) => `if ${condition}; then echo "LEAK:${name}"; else echo "ok:${name}"; fi`;
const canRead = (file: string) => `cat "${file}" >/dev/null 2>&1`;
const canWrite = (file: string) => `( echo x > "${file}" ) 2>/dev/null`;
const exists = (file: string) => `test -e "${file}"`;

interface Places {
  dataDir: string;
  workDir: string;
  cache: string;
  victimWorkspace: string;
  victimHome: string;
}

function probe(p: Places): string {
  const secretFiles = ['admin-token', 'secret-key', 'bootstrap-api-key', 'drover.sqlite', 'drover.sqlite-wal'];
  return [
    'echo "uid=$(id -u) gid=$(id -g)"',
    ...secretFiles.map((f) => attempt(`read-data-dir-${f}`, canRead(path.join(p.dataDir, f)))),
    attempt('see-data-dir', exists(path.join(p.dataDir, 'admin-token'))),
    attempt('read-runner-json', canRead(path.join(p.workDir, 'runner.json'))),
    attempt('read-credentials-json', canRead(path.join(p.workDir, 'credentials.json'))),
    attempt('read-runner-json-relative', canRead('../../../runner.json')),
    attempt('read-admin-token-relative', `${canRead('../../../../admin-token')} || ${canRead('../../../admin-token')}`),
    attempt('read-journal', canRead(path.join(p.workDir, 'agents.journal'))),
    attempt('read-victim-workspace', canRead(path.join(p.victimWorkspace, 'victim.txt'))),
    attempt('read-victim-home', canRead(path.join(p.victimHome, 'victim.txt'))),
    attempt('see-victim', exists(p.victimWorkspace)),
    attempt('read-cache-config', canRead(path.join(p.cache, 'config'))),
    attempt('read-cache-head', canRead(path.join(p.cache, 'HEAD'))),
    attempt('git-cache-config', `git config --file '${path.join(p.cache, 'config')}' --list >/dev/null 2>&1`),
    attempt('write-cache-objects', canWrite(path.join(p.cache, 'objects', 'planted'))),
    attempt('write-cache-config', canWrite(path.join(p.cache, 'config'))),
    attempt('read-shadow', canRead('/etc/shadow')),
    attempt('write-etc', canWrite('/etc/drover-planted')),
    attempt('write-usr', canWrite('/usr/drover-planted')),
    attempt('write-root', canWrite('/drover-planted')),
    attempt('write-work-dir', canWrite(path.join(p.workDir, 'planted'))),
    attempt('write-data-dir', canWrite(path.join(p.dataDir, 'planted'))),
    attempt('unnamed-credential-in-proc', `grep -qs '${UNNAMED}' /proc/[0-9]*/environ`),
    attempt('env-credential-in-proc', `grep -qs '${FROM_ENV}' /proc/[0-9]*/environ`),
    // (Spelled so that the probe's own command line, which holds this script, does not match.)
    attempt('runner-process-visible', `grep -qs "drover$(echo .mjs)" /proc/[0-9]*/cmdline`),
    // What must work.
    `${canWrite('$DROVER_WORKSPACE/w')} && echo can-write-workspace`,
    `${canWrite('$HOME/h')} && echo can-write-home`,
    `${canWrite('/tmp/t')} && echo can-write-tmp`,
    'echo "named=$NAMED"',
    'echo "env-names=$(env | cut -d= -f1 | sort | tr "\\n" " ")"',
    'git log --format=%s -1 && echo "git-branch=$(git rev-parse --abbrev-ref HEAD)"',
    'echo change >> README && git commit -qam "agent commit" && echo can-commit',
    `curl -s -o /dev/null -w 'post=%{http_code}\\n' -X POST "$DROVER_API_URL/api/v1/ext/orgs/$DROVER_ORG/channels/$DROVER_CHANNEL_ID/messages" ` +
      `-H "X-API-Key: $DROVER_POD_TOKEN" -H 'content-type: application/json' -d "{\\"content\\":\\"hello from $DROVER_POD_KEY\\"}"`,
  ].join('\n');
}

describe.each(DATABASES)('what a pod can reach in its sandbox (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let external: RunnerProcess;
  let scratch: string;
  let adminToken: string;
  let apiKey: string;
  let localRunnerId: number;
  let channelId: number;
  let bare: string;
  const c = podClient(
    () => server.url,
    () => apiKey,
    '',
  );
  const admin = (method: string, url: string, body?: unknown) => http(server.url, method, `/api/v1/admin${url}`, { bearer: adminToken, body });

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('sandbox');
    const credentials = JSON.stringify({ NAMED, UNNAMED });
    fs.mkdirSync(path.join(database.dataDir, 'runner'), { recursive: true });
    fs.writeFileSync(path.join(database.dataDir, 'runner', 'credentials.json'), credentials, { mode: 0o600 });
    // No DROVER_ADMIN_TOKEN / DROVER_SECRET_KEY: the server writes both into its data dir, as on a first start.
    server = await startServerProcess({
      dataDir: database.dataDir,
      localRunner: true,
      env: { ...database.env, DROVER_LOCAL_RUNNER: 'true', DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn', DROVER_CREDENTIAL_FROM_ENV: FROM_ENV },
    });
    adminToken = fs.readFileSync(path.join(database.dataDir, 'admin-token'), 'utf8').trim();
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    localRunnerId = await server.localRunnerConnected();

    const workDir = path.join(scratch, 'runner');
    fs.mkdirSync(workDir, { recursive: true });
    fs.writeFileSync(path.join(workDir, 'credentials.json'), credentials, { mode: 0o600 });
    const token = await admin('POST', '/orgs/default/runner-tokens', {});
    expect(token.status, token.text).toBe(201);
    external = await startRunnerProcess({
      server: server.url,
      token: (token.body as { token: string }).token,
      workDir,
      name: 'external',
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8', DROVER_CREDENTIAL_FROM_ENV: FROM_ENV },
    });
    await waitFor(async () => (await c.runnerStatus(external.runnerId)) === 'online', { what: 'the external runner online' });

    ({ bare } = bareRepository(scratch, 'demo', { README: 'demo\n' }));
    const repo = await admin('POST', '/orgs/default/repositories', { name: 'demo', full_name: 'local/demo', provider: 'git', url: bare, default_branch: 'main' });
    expect(repo.status, repo.text).toBe(201);
    const channel = await c.api('POST', `${ORG}/channels`, { name: `sandbox-${kind}` });
    expect(channel.status, channel.text).toBe(201);
    channelId = (channel.body as { channel: { id: number } }).channel.id;
  });

  afterAll(async () => {
    await external?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('both runners say they sandbox their pods with bwrap, and advertise shell with its version', async () => {
    for (const id of [localRunnerId, external.runnerId]) {
      const runner = ((await c.api('GET', `${ORG}/runners/${id}`)).body as { runner: { sandbox: string; agents: { slug: string; version: string | null }[] } }).runner;
      expect(runner.sandbox).toBe('bwrap');
      expect(runner.agents).toContainEqual({ slug: 'shell', version: expect.stringMatching(/^\d+\.\d+/) });
    }
  });

  it.each(['local', 'external'] as const)('from a shell pod on the %s runner: nothing of the runner, the server or other pods can be read or written', async (which) => {
    const runnerId = which === 'local' ? localRunnerId : external.runnerId;
    const workDir = which === 'local' ? path.join(database.dataDir, 'runner') : external.workDir;
    const victim = await c.createPod('echo victim-secret > victim.txt\necho home-secret > "$HOME/victim.txt"\necho ready\nwhile [ ! -e stop ]; do sleep 0.1; done', runnerId);
    await waitFor(async () => (await c.output(victim)).includes('ready'), { what: 'the victim pod ready' });
    const places: Places = {
      dataDir: database.dataDir,
      workDir,
      cache: path.join(workDir, 'repos', `${createHash('sha256').update(bare).digest('hex').slice(0, 24)}.git`),
      victimWorkspace: path.join(workDir, 'pods', victim, 'workspace'),
      victimHome: path.join(workDir, 'pods', victim, 'home'),
    };
    expect(fs.readFileSync(path.join(places.victimWorkspace, 'victim.txt'), 'utf8')).toBe('victim-secret\n');

    const script = probe(places);
    const key = await c.createPod(script, runnerId, 'REPO demo', 'CREDENTIAL NAMED', `CONFIG channel_id = ${channelId}`);
    const pod = await c.waitStatus(key, ['completed', 'failed'], 30_000);
    const text = await c.output(key);
    expect(pod.status, `${pod.error_message}\n${text}`).toBe('completed');
    expect(fs.existsSync(path.join(places.cache, 'config'))).toBe(true); // the cache is there, on the host

    expect(text.split('\n').filter((line) => line.startsWith('LEAK:')), text).toEqual([]);
    expect(text.match(/^ok:/gm)?.length, text).toBe(script.match(/echo "ok:/g)!.length);
    expect(text).toMatch(/^uid=[1-9]\d* gid=\d+$/m);
    for (const line of ['can-write-workspace', 'can-write-home', 'can-write-tmp', 'can-commit', 'post=201', `named=${NAMED}`, 'initial', 'git-branch=main']) {
      expect(text, line).toContain(`${line}\n`);
    }
    const names = /^env-names=(.*)$/m.exec(text)![1].trim().split(' ');
    // Besides Drover's own, the network walls' proxy variables (docs/runners.md "Network").
    const proxyNames = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY'].flatMap((n) => [n, n.toLowerCase()]);
    expect(names.filter((n) => ![...proxyNames, 'PATH', 'HOME', 'LANG', 'TERM', 'PWD', 'SHLVL', '_', 'NAMED'].includes(n) && !n.startsWith('DROVER_'))).toEqual([]);
    expect(text).not.toContain(UNNAMED);
    expect(text).not.toContain(FROM_ENV);
    expect(text).not.toContain(adminToken);

    const messages = ((await c.api('GET', `${ORG}/channels/${channelId}/messages`)).body as { messages: { sender_type: string; pod_key: string | null; content: string }[] }).messages;
    expect(messages).toContainEqual(expect.objectContaining({ sender_type: 'agent', pod_key: key, content: `hello from ${key}` }));
    // Nothing planted anywhere on the host.
    for (const file of [path.join(database.dataDir, 'planted'), path.join(workDir, 'planted'), path.join(places.cache, 'objects', 'planted'), '/etc/drover-planted', '/usr/drover-planted', '/drover-planted']) {
      expect(fs.existsSync(file), file).toBe(false);
    }
    // The victim was untouched, and ends normally.
    fs.writeFileSync(path.join(places.victimWorkspace, 'stop'), '');
    expect(await c.waitStatus(victim, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  });
});
