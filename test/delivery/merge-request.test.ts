/**
 * `CONFIG deliver = merge_request` with REAL processes on every database: repositories served over
 * smart HTTP on loopback (`git http-backend`, requiring the token) and a stand-in of the providers'
 * REST APIs (GitHub, GitLab and Gitea shapes). The push carries the token, one request is opened,
 * a second delivery to the same branch updates it, the ticket moves to in_review and lists it, and
 * the pod never holds the token.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { bareRepository, fixtureGit } from '../helpers/git-fixture.ts';
import { basicAuth, gitHttpServer } from '../helpers/git-http.ts';
import { listen, providerStandIn } from '../helpers/provider-stand-in.ts';
import { ORG, podClient } from '../helpers/pod-client.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http as request, runDrover, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN_TOKEN = 'drvadm_delivery_mr_admin_token_0123456789abcdefgh';
const TOKEN = 'ghp_DeliveryTokenOfTheRepo_77aa';
const PROVIDERS = ['github', 'gitlab', 'gitea'] as const;

describe.each(DATABASES)('merge requests for a pod’s work (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let scratch: string;
  let served: string;
  let apiKey: string;
  const repositoryIds: Record<string, number> = {};
  const gitCalls: { url: string; auth: string | undefined; method: string }[] = [];
  const apiCalls: { provider: string; method: string; url: string; auth: string | undefined }[] = [];
  const standIn = providerStandIn(TOKEN, apiCalls);
  const servers: http.Server[] = [standIn.server];
  const c = podClient(
    () => server.url,
    () => apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('delivery-mr');
    served = path.join(scratch, 'served');
    fs.mkdirSync(served);
    for (const provider of PROVIDERS) bareRepository(served, provider, { 'README.md': `${provider}\n` });
    const gitServer = gitHttpServer({ root: () => served, token: TOKEN, onRequest: (req) => gitCalls.push({ url: req.url ?? '', auth: req.headers.authorization, method: req.method ?? '' }) });
    servers.push(gitServer);
    const gitBase = await listen(gitServer);
    const apiBase = await listen(standIn.server);
    server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn' } });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runner = await startRunnerProcess({ server: server.url, token: await c.registrationToken(), workDir: path.join(scratch, 'runner'), name: 'mr', env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8' } });
    await waitFor(async () => (await c.runnerStatus(runner.runnerId)) === 'online', { what: 'the runner online' });
    const apiBases = { github: apiBase, gitlab: `${apiBase}/api/v4`, gitea: `${apiBase}/api/v1` };
    for (const provider of PROVIDERS) {
      const created = await request(server.url, 'POST', '/api/v1/admin/orgs/default/repositories', {
        bearer: ADMIN_TOKEN,
        body: { name: provider, full_name: 'acme/app', provider, url: `${gitBase}/${provider}.git`, default_branch: 'main', token: TOKEN, api_base_url: apiBases[provider], ticket_prefix: provider.toUpperCase().slice(0, 4) },
      });
      expect(created.status, created.text).toBe(201);
      repositoryIds[provider] = (created.body as { repository: { id: number } }).repository.id;
    }
  });

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    for (const s of servers) s.close();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const settledWithMr = async (key: string) =>
    waitFor(
      async () => {
        const pod = (await c.getPod(key)) as unknown as { status: string; delivery: { status: string; branch: string; merge_request: { id: number; url: string; state: string } | null; error: string | null } | null };
        const d = pod.delivery;
        return d && d.status !== 'pending' && (d.merge_request !== null || d.error !== null || d.status !== 'pushed') ? pod : undefined;
      },
      { timeout: 60_000, what: `pod ${key} delivered with its merge request` },
    );

  it.each(PROVIDERS)('%s: push with the token, one request opened, a second delivery updates it, the ticket is in review and lists it', async (provider) => {
    const ticket = await c.api('POST', `${ORG}/tickets`, { title: 'Discount is wrong', type: 'bug' });
    expect(ticket.status, ticket.text).toBe(201);
    const slug = (ticket.body as { ticket: { slug: string } }).ticket.slug;
    const leakCheck = `env | grep -q '${TOKEN.slice(4)}' && echo LEAK; grep -rqs '${TOKEN.slice(4)}' "$HOME" .git && echo LEAK; true`;
    const first = await c.launch({
      agent_slug: 'shell',
      ticket_slug: slug,
      agentfile_layer: ['REPO ' + provider, 'CONFIG deliver = merge_request', 'PROMPT <<END', leakCheck, 'git checkout -q -b fix/discount', 'echo one > one.txt', 'END'].join('\n'),
    });
    const a = await settledWithMr(first);
    expect(a.delivery, JSON.stringify(a)).toMatchObject({ status: 'pushed', branch: 'fix/discount', error: null, merge_request: { id: 1, url: `http://mr.test/${provider}/1`, state: 'opened' } });
    expect(await c.output(first)).not.toContain('LEAK');
    const bare = path.join(served, `${provider}.git`);
    expect(fixtureGit(scratch, `--git-dir=${bare}`, 'show', 'fix/discount:one.txt')).toBe('one');
    // Every request of the push carried the token; the provider saw one request opened.
    const pushes = gitCalls.filter((call) => call.url.startsWith(`/${provider}.git/git-receive-pack`));
    expect(pushes.length).toBeGreaterThan(0);
    expect(pushes.every((call) => call.auth === basicAuth(TOKEN))).toBe(true);
    expect(standIn.stored[provider]).toHaveLength(1);
    expect(standIn.stored[provider][0]).toMatchObject({ branch: 'fix/discount', base: 'main', title: `${slug}: Discount is wrong` });
    expect(standIn.stored[provider][0].body).toContain(first);

    // A second pod on that branch: its work is pushed on top, and the same request is updated.
    const second = await c.launch({
      agent_slug: 'shell',
      ticket_slug: slug,
      agentfile_layer: ['REPO ' + provider, 'BRANCH fix/discount', 'CONFIG deliver = merge_request', 'PROMPT "echo two > two.txt"'].join('\n'),
    });
    const b = await settledWithMr(second);
    expect(b.delivery).toMatchObject({ status: 'pushed', branch: 'fix/discount', merge_request: { id: 1 } });
    expect(standIn.stored[provider]).toHaveLength(1);
    expect(standIn.stored[provider][0].body).toContain(second);
    expect(fixtureGit(scratch, `--git-dir=${bare}`, 'log', '--format=%s', 'main..fix/discount').split('\n')).toHaveLength(2);

    const shown = await waitFor(
      async () => {
        const got = await c.api('GET', `${ORG}/tickets/${slug}`);
        const t = (got.body as { ticket: { status: string; pods: { key: string; delivery: unknown }[]; merge_requests: unknown[] } }).ticket;
        return t.status === 'in_review' ? t : undefined;
      },
      { what: 'the ticket in review' },
    );
    expect(shown.pods.map((p) => p.key)).toEqual([second, first]);
    expect(shown.merge_requests).toEqual([{ id: 1, url: `http://mr.test/${provider}/1`, state: 'opened', branch: 'fix/discount' }]);
    // The CLI's `pods get` shows the delivery with its merge request link.
    const cli = await runDrover(['pods', 'get', second], { env: { HOME: scratch, XDG_CONFIG_HOME: path.join(scratch, 'xdg'), DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: apiKey } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('pushed → fix/discount');
    expect(cli.stdout).toContain(`merge request #1 (opened) http://mr.test/${provider}/1`);
  });

  it('a deleted persistent loop: the final delivery of its workspace is recorded on its last pod and updates the merge request', async () => {
    const slug = `final-${kind}`;
    const created = await c.api('POST', `${ORG}/loops`, {
      name: slug,
      slug,
      agent_slug: 'shell',
      execution_mode: 'direct',
      sandbox_strategy: 'persistent',
      repository_id: repositoryIds.github,
      runner_id: runner.runnerId,
      agentfile_layer: 'CONFIG deliver = merge_request',
      prompt_template: 'echo "run {{n}}" >> runs.txt && git add runs.txt && git commit -qm "run {{n}}"',
      prompt_variables: { n: '0' },
    });
    expect(created.status, created.text).toBe(201);
    const loopId = (created.body as { loop: { id: number } }).loop.id;
    const branch = `drover/loop-${loopId}`;
    const triggered = await c.api('POST', `${ORG}/loops/${slug}/trigger`, { variables: { n: '1' } });
    expect(triggered.status, triggered.text).toBe(201);
    const runId = (triggered.body as { run: { id: number } }).run.id;
    const podKey = await waitFor(
      async () => ((await c.api('GET', `${ORG}/loops/${slug}/runs/${runId}`)).body as { run: { pod_key: string | null } }).run.pod_key ?? undefined,
      { what: 'the run’s pod' },
    );
    const first = await settledWithMr(podKey);
    expect(first.delivery, JSON.stringify(first)).toMatchObject({ status: 'pushed', branch, error: null, merge_request: { state: 'opened' } });
    const opened = standIn.stored.github.filter((mr) => mr.branch === branch);
    expect(opened).toHaveLength(1);
    const mrId = first.delivery!.merge_request!.id;

    // Work left in the workspace after the run's delivery: delivered when the loop is deleted.
    const dir = path.join(runner.workDir, 'persistent', `loop-${loopId}`);
    fs.writeFileSync(path.join(dir, 'workspace', 'left.txt'), 'left behind\n');
    const callsBefore = apiCalls.length;
    const deleted = await c.api('DELETE', `${ORG}/loops/${slug}`);
    expect(deleted.status, deleted.text).toBe(200);
    await waitFor(() => !fs.existsSync(dir), { timeout: 60_000, what: 'the deleted loop’s workspace removed by its runner' });
    const bare = path.join(served, 'github.git');
    const head = fixtureGit(scratch, `--git-dir=${bare}`, 'rev-parse', branch);
    type Final = { head_commit: string; base_commit: string; status: string; commits: { subject: string }[]; merge_request: { id: number } | null; files_changed: number };
    const pod = await waitFor(
      async () => {
        const got = (await c.getPod(podKey)) as unknown as { delivery: Final };
        return got.delivery.head_commit === head ? got : undefined;
      },
      { timeout: 30_000, what: 'the final delivery recorded on the loop’s last pod' },
    );
    expect(pod.delivery).toMatchObject({ status: 'pushed', branch, merge_request: { id: mrId }, files_changed: 2 });
    expect(pod.delivery.commits.map((x) => x.subject)).toEqual(['run 1', `Uncommitted changes of pod loop-${loopId}`]);
    // The same request, updated (not a second one), through the provider's API.
    await waitFor(() => apiCalls.slice(callsBefore).some((call) => call.method === 'PATCH' && call.url.endsWith(`/pulls/${mrId}`)), { what: 'the merge request updated' });
    expect(standIn.stored.github.filter((mr) => mr.branch === branch)).toHaveLength(1);
    expect(apiCalls.slice(callsBefore).some((call) => call.method === 'POST')).toBe(false);
  });
});
