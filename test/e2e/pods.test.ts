/**
 * Pods end to end (docs/api.md, docs/runners.md) with REAL processes: `drover serve` and `drover runner` as
 * child processes, real bash scripts (the `shell` agent), real git repositories, and stand-ins for
 * the agent CLIs (test/fixtures/stand-in-agent.mjs) on the runner's PATH.
 *
 * One server and one runner per database for the file; tests that need another runner or server
 * start their own. Every pod a test starts ends (or is terminated) inside that test.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { mcpArgs } from '../../src/agents/mcp.ts';
import { DROVER_BIN, createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import {
  podProcesses,
  runnerPath,
  standInBinDir,
  startRunnerProcess,
  tempDir,
  waitFor,
  type RunnerProcess,
} from '../helpers/runner-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_pods_admin_token_0123456789abcdef';
const STAND_INS = ['claude', 'codex', 'gemini', 'aider', 'opencode'] as const;
const SECRET = 'do-not-leak-this-runner-secret';
const CREDENTIAL = 'the-api-token-credential-value';

interface PodDetail {
  key: string;
  status: string;
  runner_id: number;
  exit_code: number | null;
  error_message: string | null;
  started_at: string | null;
  finished_at: string | null;
  channel_id: number | null;
  repository_id: number | null;
  branch: string | null;
}

interface Output {
  output: string;
  truncated: boolean;
  total_bytes: number;
}

interface ErrorBody {
  code: string;
  error: string;
}

/** A heredoc PROMPT plus other directive lines. */
function layer(script: string, ...directives: string[]): string {
  if (/^END$/m.test(script)) throw new Error('the script must not contain a line END');
  return [...directives, 'PROMPT <<END', script, 'END'].join('\n');
}

describe.each(DATABASES)('pods end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let apiKey: string;
  let runner: RunnerProcess;
  let binDir: string;
  let home: string;
  let scratch: string;
  let runnerEnv: Record<string, string>;

  const api = (method: string, urlPath: string, body?: unknown, key = apiKey) => http(server.url, method, urlPath, { key, body });
  const admin = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `/api/v1/admin${urlPath}`, { bearer: ADMIN_TOKEN, body });

  async function registrationToken(): Promise<string> {
    const response = await admin('POST', '/orgs/default/runner-tokens', {});
    expect(response.status).toBe(201);
    return (response.body as { token: string }).token;
  }

  async function createPod(agentfile: string, extra: Record<string, unknown> = {}, agent = 'shell'): Promise<string> {
    const response = await api('POST', `${ORG}/pods`, { agent_slug: agent, agentfile_layer: agentfile, ...extra });
    expect(response.status, response.text).toBe(201);
    const pod = (response.body as { pod: { pod_key: string; status: string; agent_slug: string } }).pod;
    expect(pod).toMatchObject({ status: 'initializing', agent_slug: agent });
    return pod.pod_key;
  }

  async function getPod(key: string): Promise<PodDetail> {
    const response = await api('GET', `${ORG}/pods/${key}`);
    expect(response.status, response.text).toBe(200);
    return (response.body as { pod: PodDetail }).pod;
  }

  const waitStatus = (key: string, statuses: string[], timeout = 15_000) =>
    waitFor(
      async () => {
        const pod = await getPod(key);
        return statuses.includes(pod.status) ? pod : undefined;
      },
      { timeout, what: `pod ${key} to be ${statuses.join('|')}` },
    );

  async function output(key: string, query = ''): Promise<Output> {
    const response = await api('GET', `${ORG}/pods/${key}/output${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body as Output;
  }

  /** Waits for a file a pod's script writes (a pid, a token), and returns its trimmed content. */
  const waitFile = (file: string, timeout = 15_000) =>
    waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() || undefined : undefined), { timeout, what: file });

  const workspaceOf = (key: string, of: RunnerProcess = runner) => path.join(of.workDir, 'pods', key, 'workspace');
  const homeOf = (key: string, of: RunnerProcess = runner) => path.join(of.workDir, 'pods', key, 'home');

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('pods');
    home = tempDir('home');
    // A runner user's ~/.bashrc: the shell agent must not run it (it would bring the runner's own
    // environment, and whatever else it does, into the pod).
    fs.writeFileSync(path.join(home, '.bashrc'), 'export FROM_BASHRC=leaked\necho bashrc-was-read\n');
    binDir = standInBinDir(STAND_INS);
    server = await startServerProcess({
      dataDir: database.dataDir,
      // No output quota: the output tests here are about the kept tail (the quota: test/domain/output-quota.test.ts).
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_SWEEP_INTERVAL_MS: '200', DROVER_LOG_LEVEL: 'warn', DROVER_POD_OUTPUT_BYTES_PER_SEC: '0' },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    runnerEnv = {
      PATH: runnerPath(binDir),
      HOME: home,
      LANG: 'C.UTF-8',
      RUNNER_ONLY_SECRET: SECRET,
      DROVER_CREDENTIAL_API_TOKEN: CREDENTIAL,
    };
    runner = await startRunnerProcess({
      server: server.url,
      token: await registrationToken(),
      workDir: path.join(scratch, 'runner'),
      name: 'main',
      maxPods: 8,
      labels: 'e2e,main',
      env: runnerEnv,
    });
    await waitFor(async () => ((await api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', {
      what: 'the runner to be online',
    });
  });

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    for (const dir of [scratch, home, binDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the runner registers with its name, labels, agents and capacity', async () => {
    const response = await api('GET', `${ORG}/runners/${runner.runnerId}`);
    expect(response.status).toBe(200);
    expect((response.body as { runner: unknown }).runner).toMatchObject({
      id: runner.runnerId,
      name: 'main',
      status: 'online',
      labels: ['e2e', 'main'],
      max_pods: 8,
      pod_count: 0,
      os: process.platform,
      arch: process.arch,
    });
    const available = (await api('GET', `${ORG}/runners/available`)).body as { runners: { id: number }[] };
    expect(available.runners.map((r) => r.id)).toContain(runner.runnerId);
  });

  it('a shell pod that succeeds: completed, exit code 0, stdout and stderr captured, nothing of the runner leaks in', async () => {
    const key = await createPod(
      layer(
        [
          'echo "hello from $DROVER_POD_KEY"',
          'echo to-stderr >&2',
          'echo "cwd=$(pwd)"',
          'echo "bashrc=${FROM_BASHRC:-unset}"',
          'echo "secret=${RUNNER_ONLY_SECRET:-unset}"',
          'echo "credential=${API_TOKEN:-unset}"',
          'echo "org=$DROVER_ORG api=$DROVER_API_URL"',
        ].join('\n'),
      ),
      { alias: 'hello pod' },
    );
    const pod = await waitStatus(key, ['completed', 'failed']);
    const { output: text } = await output(key);
    expect(pod, text).toMatchObject({ status: 'completed', exit_code: 0, error_message: null, runner_id: runner.runnerId });
    expect(pod.started_at).not.toBeNull();
    expect(pod.finished_at).not.toBeNull();
    expect(text).toContain(`hello from ${key}\n`);
    expect(text).toContain('to-stderr\n');
    expect(text).toContain(`cwd=${workspaceOf(key)}\n`);
    expect(text).toContain(`org=default api=${server.url}\n`);
    expect(text).toContain('secret=unset\n');
    expect(text).toContain('credential=unset\n'); // not asked for with CREDENTIAL
    expect(text).not.toContain('bashrc-was-read');
    expect(text).toContain('bashrc=unset\n');
    // The workspace is removed when the pod ends.
    await waitFor(() => !fs.existsSync(workspaceOf(key)), { what: 'the workspace to be removed' });
    const onRunner = (await api('GET', `${ORG}/runners/${runner.runnerId}/pods`)).body as { pods: { key: string; status: string }[] };
    expect(onRunner.pods).toContainEqual(expect.objectContaining({ key, status: 'completed' }));
  });

  it('a shell pod that exits 3: failed, exit code 3, error_message says so', async () => {
    const key = await createPod(layer('echo about to fail\nexit 3'));
    const pod = await waitStatus(key, ['completed', 'failed']);
    expect(pod).toMatchObject({ status: 'failed', exit_code: 3 });
    expect(pod.error_message).toMatch(/exit code 3/);
    expect((await output(key)).output).toContain('about to fail');
  });

  it('a long pod terminated through the API: terminated, and every process it started is gone from the runner machine', async () => {
    const key = await createPod(layer(`sleep 300 &\nsetsid sleep 301 &\necho started\nsleep 300`));
    await waitFor(async () => (await output(key)).output.includes('started'), { what: 'the agent to start its children' });
    await waitStatus(key, ['running']);
    // The agent, its background child and the one in a session of its own (and the sandbox around them).
    expect(podProcesses(key).length).toBeGreaterThanOrEqual(3);

    const stop = await api('POST', `${ORG}/pods/${key}/terminate`);
    expect(stop.status, stop.text).toBe(200);
    expect((stop.body as { message: string }).message).toMatch(/terminated/i);
    const pod = await getPod(key);
    expect(pod.status).toBe('terminated');
    expect(pod.finished_at).not.toBeNull();
    await waitFor(() => podProcesses(key).length === 0, { timeout: 12_000, what: 'every process of the pod to be gone' });
    await waitFor(() => !fs.existsSync(workspaceOf(key)), { what: 'the workspace to be removed' });

    const again = await api('POST', `${ORG}/pods/${key}/terminate`);
    expect(again.status).toBe(409);
    expect((again.body as ErrorBody).code).toBe('POD_NOT_ACTIVE');
    // What the runner reported afterwards does not change the outcome (bounded on purpose: nothing may change).
    await new Promise((r) => setTimeout(r, 500));
    expect((await getPod(key)).status).toBe('terminated');
  });

  it('terminate escalates to SIGKILL after the 10 s grace when the agent ignores SIGTERM', async () => {
    const key = await createPod(layer(`trap '' TERM\necho trapped\nwhile true; do sleep 1; done`));
    await waitFor(async () => (await output(key)).output.includes('trapped'), { what: 'the agent to ignore SIGTERM' });
    await waitStatus(key, ['running']);
    const stoppedAt = Date.now();
    expect((await api('POST', `${ORG}/pods/${key}/terminate`)).status).toBe(200);
    // Bounded on purpose: the agent must survive SIGTERM for a while.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(podProcesses(key).length).toBeGreaterThan(0); // SIGTERM is ignored …
    await waitFor(() => podProcesses(key).length === 0, { timeout: 13_000, what: 'SIGKILL of the pod' }); // … SIGKILL is not
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(9_000);
  }, 30_000);

  it('past its deadline, a running pod is terminated by the server (the backstop of the runner timer) with error_message "timeout"', async () => {
    // pod_timeout_minutes has a 1-minute minimum: move the stored deadline into the past instead of waiting.
    const key = await createPod(layer(`sleep 300`, 'CONFIG pod_timeout_minutes = 1'));
    const running = await waitStatus(key, ['running']);
    expect(running).toMatchObject({ status: 'running' });
    const store = database.open();
    try {
      const row = await store.db.selectFrom('pods').select(['deadline_at', 'started_at']).where('key', '=', key).executeTakeFirstOrThrow();
      expect(Number(row.deadline_at) - Number(row.started_at)).toBe(60_000);
      await store.db.updateTable('pods').set({ deadline_at: Date.now() - 10_000 }).where('key', '=', key).execute();
    } finally {
      await store.close();
    }
    const pod = await waitStatus(key, ['terminated', 'failed', 'completed'], 5_000);
    expect(pod).toMatchObject({ status: 'terminated', error_message: 'timeout' });
    await waitFor(() => podProcesses(key).length === 0, { timeout: 12_000, what: 'the timed-out agent to be stopped' });
  });

  it('CONFIG auto_close = false: the pod stays running after its agent finished, until terminated; then its workspace goes', async () => {
    const key = await createPod(layer('echo did-the-work > result.txt\necho agent-done', 'CONFIG auto_close = false'));
    await waitFor(async () => (await output(key)).output.includes('agent-done'), { what: 'the agent to finish' });
    // Bounded on purpose: the pod must not close by itself.
    await new Promise((r) => setTimeout(r, 500));
    expect((await getPod(key)).status).toBe('running');
    expect(fs.readFileSync(path.join(workspaceOf(key), 'result.txt'), 'utf8')).toBe('did-the-work\n');
    expect((await api('POST', `${ORG}/pods/${key}/terminate`)).status).toBe(200);
    expect((await getPod(key)).status).toBe('terminated');
    await waitFor(() => !fs.existsSync(workspaceOf(key)), { timeout: 5_000, what: 'the workspace to be removed once terminated' });
  });

  it('output is readable while the pod runs', async () => {
    const key = await createPod(layer('echo first-part\nwhile [ ! -e "$DROVER_WORKSPACE/go" ]; do sleep 0.1; done\necho second-part'));
    await waitFor(async () => (await output(key)).output.includes('first-part'), { what: 'the first output' });
    expect((await getPod(key)).status).toBe('running');
    expect((await output(key)).output).not.toContain('second-part');
    fs.writeFileSync(path.join(workspaceOf(key), 'go'), '');
    expect(await waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect((await output(key)).output).toBe('first-part\nsecond-part\n');
  });

  it('3 MiB of output: the last 1 MiB is kept, truncated, total_bytes counts everything; tail_bytes cuts further', async () => {
    const total = 3_300_000;
    const key = await createPod(layer(`yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY | head -c ${total}\necho\necho THE-END`));
    expect(await waitStatus(key, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
    const out = await output(key);
    expect(out.truncated).toBe(true);
    expect(out.total_bytes).toBe(total + 1 + 'THE-END\n'.length);
    expect(Buffer.byteLength(out.output)).toBe(1024 * 1024);
    expect(out.output.endsWith('\nTHE-END\n')).toBe(true);
    const tail = await output(key, '?tail_bytes=100');
    expect(tail.output).toBe(out.output.slice(-100));
    expect(tail.truncated).toBe(true);
  }, 40_000);

  it('multi-byte UTF-8 output arrives intact, whatever the pipe chunking', async () => {
    const key = await createPod(layer(`node -e "process.stdout.write('é€😀'.repeat(90000))"`));
    expect(await waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const out = await output(key);
    expect(out.output.includes('\uFFFD')).toBe(false);
    expect(out.output).toBe('é€😀'.repeat(90000));
    expect(out).toMatchObject({ truncated: false, total_bytes: 9 * 90000 });
  });

  it('binary output (NUL bytes, invalid UTF-8): nothing after it is lost and the runner link survives', async () => {
    const key = await createPod(layer("printf 'before\\0after\\n'\nhead -c 300000 /dev/urandom\necho\necho still-here"));
    expect(await waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const text = (await output(key)).output;
    expect(text.startsWith('before')).toBe(true);
    expect(text).toMatch(/^before.after\n/);
    expect(text.endsWith('\nstill-here\n')).toBe(true);
    const next = await createPod(layer('echo link-ok'));
    expect(await waitStatus(next, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect((await output(next)).output).toBe('link-ok\n');
  });

  it('a pod posts to its channel with its own token: sender agent and pod_key; system messages for start and end; the token dies with the pod', async () => {
    const created = await api('POST', `${ORG}/channels`, { name: `pods-e2e-${kind}` });
    expect(created.status, created.text).toBe(201);
    const channelId = (created.body as { channel: { id: number } }).channel.id;
    const script = [
      "cat > post.mjs <<'JS'",
      'const base = `${process.env.DROVER_API_URL}/api/v1/ext/orgs/${process.env.DROVER_ORG}`;',
      "const headers = { 'x-api-key': process.env.DROVER_POD_TOKEN, 'content-type': 'application/json' };",
      'const post = await fetch(`${base}/channels/${process.env.DROVER_CHANNEL_ID}/messages`, {',
      "  method: 'POST', headers, body: JSON.stringify({ content: `hello from ${process.env.DROVER_POD_KEY}` }),",
      '});',
      'console.log(`post=${post.status}`);',
      'const self = await fetch(`${base}/pods/${process.env.DROVER_POD_KEY}`, { headers });',
      'console.log(`self=${self.status} ${(await self.json()).pod?.status}`);',
      'const tickets = await fetch(`${base}/runners`, { headers });',
      'console.log(`runners=${tickets.status}`);',
      "const loop = await fetch(`${base}/loops`, { method: 'POST', headers, body: JSON.stringify({ name: 'not mine', prompt_template: 'x', agent_slug: 'shell' }) });",
      'console.log(`loops=${loop.status}`);',
      'JS',
      'node post.mjs',
      'echo "channel=$DROVER_CHANNEL_ID"',
      'echo "token=$DROVER_POD_TOKEN"',
    ].join('\n');
    const key = await createPod(layer(script, `CONFIG channel_id = ${channelId}`));
    const pod = await waitStatus(key, ['completed', 'failed']);
    const text = (await output(key)).output;
    expect(pod, text).toMatchObject({ status: 'completed', channel_id: channelId });
    expect(text).toContain('post=201');
    expect(text).toContain('self=200 running');
    // The pod token reads runners, repositories and loops, writes no loop (docs/mcp.md).
    expect(text).toContain('runners=200');
    expect(text).toContain('loops=403');
    expect(text).toContain(`channel=${channelId}`);

    const messages = await waitFor(
      async () => {
        const list = ((await api('GET', `${ORG}/channels/${channelId}/messages`)).body as { messages: { sender_type: string; pod_key: string | null; content: string }[] }).messages;
        return list.length >= 3 ? list : undefined;
      },
      { what: 'three channel messages' },
    );
    expect(messages).toContainEqual(expect.objectContaining({ sender_type: 'agent', pod_key: key, content: `hello from ${key}` }));
    const system = messages.filter((m) => m.sender_type === 'system');
    expect(system.some((m) => /started/.test(m.content) && m.content.includes(key))).toBe(true);
    expect(system.some((m) => /completed/.test(m.content) && m.content.includes(key))).toBe(true);
    expect(system.every((m) => m.pod_key === key)).toBe(true);

    const token = /^token=(\S+)$/m.exec(text)?.[1] ?? '';
    expect(token).toMatch(/^drvpod_/);
    const after = await api('POST', `${ORG}/channels/${channelId}/messages`, { content: 'too late' }, token);
    expect(after.status).toBe(401);
    expect((await api('GET', `${ORG}/pods/${key}`, undefined, token)).status).toBe(401);
  });

  describe('repositories', () => {
    let bare: string;

    beforeAll(async () => {
      const root = fs.mkdtempSync(path.join(scratch, 'git-'));
      bare = path.join(root, 'origin.git');
      const work = path.join(root, 'work');
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, GIT_CONFIG_NOSYSTEM: '1' };
      const git = (cwd: string, ...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, env, stdio: 'pipe' });
      git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
      git(root, 'clone', '--quiet', bare, work);
      fs.writeFileSync(path.join(work, 'README'), 'base\n');
      git(work, 'checkout', '--quiet', '-b', 'main');
      git(work, 'add', 'README');
      git(work, 'commit', '--quiet', '-m', 'base');
      git(work, 'push', '--quiet', 'origin', 'main');
      git(work, 'checkout', '--quiet', '-b', 'feature/x');
      fs.writeFileSync(path.join(work, 'file-only-on-feature'), 'feature-content\n');
      git(work, 'add', 'file-only-on-feature');
      git(work, 'commit', '--quiet', '-m', 'feature');
      git(work, 'push', '--quiet', 'origin', 'feature/x');
      for (const body of [
        { name: 'demo', full_name: 'local/demo', provider: 'git', url: bare, default_branch: 'main' },
        { name: 'missing', full_name: 'local/missing', provider: 'git', url: path.join(root, 'does-not-exist.git'), default_branch: 'main' },
      ]) {
        // Registration checks a local path (docs/api.md): `missing` exists then, and is gone before its pods run.
        if (body.name === 'missing') git(root, 'init', '--quiet', '--bare', body.url);
        const response = await admin('POST', '/orgs/default/repositories', body);
        expect(response.status, response.text).toBe(201);
        if (body.name === 'missing') fs.rmSync(body.url, { recursive: true, force: true });
      }
    });

    it('REPO + BRANCH: the workspace is a checkout of its own with that branch checked out, tracking origin', async () => {
      const script = [
        'cat file-only-on-feature',
        'test -e README && echo has-readme',
        'echo "head=$(git rev-parse --abbrev-ref HEAD)"',
        'echo "upstream=$(git rev-parse --abbrev-ref --symbolic-full-name @{u})"',
      ].join('\n');
      const key = await createPod(layer(script, 'REPO demo', 'BRANCH feature/x'));
      const pod = await waitStatus(key, ['completed', 'failed'], 30_000);
      const text = (await output(key)).output;
      expect(pod, text).toMatchObject({ status: 'completed', branch: 'feature/x' });
      expect(pod.repository_id).toEqual(expect.any(Number));
      expect(text).toContain('feature-content\n');
      expect(text).toContain('has-readme\n');
      expect(text).toContain('head=feature/x\n');
      expect(text).toContain('upstream=origin/feature/x\n');

      // Without BRANCH: the default branch, which lacks the feature file.
      const plain = await createPod(layer('test -e file-only-on-feature && echo present || echo absent\ncat README', 'REPO demo'));
      expect(await waitStatus(plain, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
      expect((await output(plain)).output).toBe('absent\nbase\n');
    });

    it('a repository that cannot be cloned: failed, with a clear error_message, and no agent run', async () => {
      const key = await createPod(layer('echo the-agent-ran', 'REPO missing'));
      const pod = await waitStatus(key, ['completed', 'failed'], 30_000);
      expect(pod.status).toBe('failed');
      expect(pod.error_message).toMatch(/clon.*does-not-exist\.git.*failed|does-not-exist\.git/);
      expect(pod.exit_code).toBeNull();
      expect((await output(key)).output).not.toContain('the-agent-ran');
    });
  });

  describe('built-in agents on a real runner (stand-in CLIs)', () => {
    const PROMPT = '- fix "the" bug; STAND_IN_SLEEP_MS=60000';
    /** The drover MCP server's arguments (docs/mcp.md): the runner's Node running its drover mcp, with the pod's variables by name. */
    const mcpLaunch = { command: process.execPath, args: [DROVER_BIN, 'mcp'], env: ['DROVER_API_URL', 'DROVER_ORG', 'DROVER_POD_TOKEN', 'DROVER_POD_KEY'] };
    const droverMcp = (slug: string) => mcpArgs(slug, mcpLaunch);
    const expected: Record<string, { program: string; model: string; argv: string[]; stdin: string | null }> = {
      'claude-code': {
        program: 'claude',
        model: 'm1',
        argv: ['-p', '--output-format', 'stream-json', '--verbose', '--model', 'm1', '--max-turns', '3', '--permission-mode', 'bypassPermissions', ...droverMcp('claude-code'), '--', PROMPT],
        stdin: '',
      },
      codex: {
        program: 'codex',
        model: 'm1',
        argv: [
          'exec',
          '--json',
          '--sandbox',
          'workspace-write',
          '-c',
          'sandbox_workspace_write.network_access=true',
          '-c',
          'shell_environment_policy.ignore_default_excludes=true',
          '--skip-git-repo-check',
          ...droverMcp('codex'),
          '--model',
          'm1',
          '--',
          PROMPT,
        ],
        stdin: '',
      },
      'gemini-cli': {
        program: 'gemini',
        model: 'm1',
        argv: ['--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust', '--model', 'm1', `--prompt=${PROMPT}`],
        stdin: '',
      },
      aider: {
        program: 'aider',
        model: 'm1',
        argv: [
          '--yes-always',
          '--no-pretty',
          '--no-check-update',
          '--no-show-release-notes',
          '--no-analytics',
          '--no-show-model-warnings',
          '--no-detect-urls',
          '--model',
          'm1',
          `--message=${PROMPT}`,
        ],
        stdin: '',
      },
      opencode: { program: 'opencode', model: 'prov/m1', argv: ['run', '--format', 'json', '--auto', '--model', 'prov/m1'], stdin: PROMPT },
    };

    it.each(Object.keys(expected))('%s: the command line of builtin.ts, and only PATH/HOME/LANG/TERM/DROVER_*/named credentials in its environment', async (slug) => {
      const want = expected[slug];
      const key = await createPod(
        layer(PROMPT, `CONFIG model = ${want.model}`, 'CONFIG max_turns = 3', 'CREDENTIAL API_TOKEN'),
        {},
        slug,
      );
      const recordFile = path.join(workspaceOf(key), '.stand-in-record.jsonl');
      const raw = await waitFile(recordFile);
      const record = JSON.parse(raw.split('\n')[0]) as { name: string; argv: string[]; env: Record<string, string>; cwd: string; stdin: string | null; pid: number };
      expect((await waitStatus(key, ['running'])).status).toBe('running');
      // Gemini CLI and OpenCode find the drover MCP server in their config files in the pod's HOME
      // (read while the pod runs: the runner removes its HOME once it has ended).
      if (slug === 'gemini-cli') {
        const settings = JSON.parse(fs.readFileSync(path.join(homeOf(key), '.gemini', 'settings.json'), 'utf8'));
        expect(settings.mcpServers.drover).toMatchObject({ command: process.execPath, args: [DROVER_BIN, 'mcp'], env: { DROVER_POD_TOKEN: '$DROVER_POD_TOKEN' }, trust: true });
      }
      if (slug === 'opencode') {
        const config = JSON.parse(fs.readFileSync(path.join(homeOf(key), '.config', 'opencode', 'opencode.json'), 'utf8'));
        expect(config.mcp.drover).toMatchObject({ type: 'local', command: [process.execPath, DROVER_BIN, 'mcp'], environment: { DROVER_POD_TOKEN: '{env:DROVER_POD_TOKEN}' } });
      }
      const stop = await api('POST', `${ORG}/pods/${key}/terminate`);
      expect(stop.status).toBe(200);

      expect(record.name).toBe(want.program);
      expect(record.argv).toEqual(want.argv);
      expect(record.stdin ?? '').toBe(want.stdin ?? '');
      expect(record.cwd).toBe(workspaceOf(key));
      const names = Object.keys(record.env).sort();
      // PWD: bubblewrap names the working directory it starts the agent in (the workspace).
      // The proxy variables: the pod's network walls (docs/runners.md "Network").
      const proxyNames = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY'].flatMap((n) => [n, n.toLowerCase()]);
      const unexpected = names.filter((n) => ![...proxyNames, 'PATH', 'HOME', 'LANG', 'TERM', 'API_TOKEN', 'PWD'].includes(n) && !n.startsWith('DROVER_'));
      expect(unexpected).toEqual([]);
      if (record.env.PWD !== undefined) expect(record.env.PWD).toBe(workspaceOf(key));
      expect(names.filter((n) => n.startsWith('DROVER_CREDENTIAL_'))).toEqual([]);
      expect(JSON.stringify(record.env)).not.toContain(SECRET);
      expect(record.env).toMatchObject({
        PATH: runnerEnv.PATH,
        HOME: homeOf(key),
        LANG: 'C.UTF-8',
        API_TOKEN: CREDENTIAL,
        DROVER_API_URL: server.url,
        DROVER_ORG: 'default',
        DROVER_POD_KEY: key,
        DROVER_WORKSPACE: workspaceOf(key),
      });
      expect(record.env.DROVER_POD_TOKEN).toMatch(/^drvpod_/);
      expect(record.env.DROVER_CHANNEL_ID).toBeUndefined();
      // Only a custom agent with prompt_position env gets the prompt as DROVER_PROMPT.
      expect(record.env.DROVER_PROMPT).toBeUndefined();

      await waitFor(() => podProcesses(key).length === 0, { timeout: 12_000, what: 'the stand-in to be stopped' });
      expect((await getPod(key)).status).toBe('terminated');
    });

    it('CONFIG mcp = false: no drover MCP server on the command line (Claude Code) nor in the HOME config (Gemini CLI)', async () => {
      for (const slug of ['claude-code', 'gemini-cli']) {
        const key = await createPod(layer('say hi STAND_IN_SLEEP_MS=60000', 'CONFIG mcp = false'), {}, slug);
        const record = JSON.parse((await waitFile(path.join(workspaceOf(key), '.stand-in-record.jsonl'))).split('\n')[0]) as { argv: string[] };
        expect(record.argv.join(' ')).not.toContain('mcp');
        expect(fs.existsSync(path.join(homeOf(key), '.gemini', 'settings.json'))).toBe(false);
        expect((await api('POST', `${ORG}/pods/${key}/terminate`)).status).toBe(200);
      }
    });

    it('an agent that runs to the end: completed, with the CLI-shaped output captured', async () => {
      const key = await createPod(layer('say hi STAND_IN_EXIT=0'), {}, 'claude-code');
      expect(await waitStatus(key, ['completed', 'failed'])).toMatchObject({ status: 'completed', exit_code: 0 });
      const text = (await output(key)).output;
      expect(text).toMatch(/"type":"system","subtype":"init"/);
      expect(text).toMatch(/"type":"result"/);
      const failing = await createPod(layer('say hi STAND_IN_EXIT=7'), {}, 'codex');
      expect(await waitStatus(failing, ['completed', 'failed'])).toMatchObject({ status: 'failed', exit_code: 7 });
    });

    it('a CREDENTIAL the runner does not have: failed, naming it; a bad opencode model: failed, saying why', async () => {
      const key = await createPod(layer('x', 'CREDENTIAL NOT_CONFIGURED_HERE'), {}, 'claude-code');
      const pod = await waitStatus(key, ['completed', 'failed']);
      expect(pod.status).toBe('failed');
      expect(pod.error_message).toMatch(/NOT_CONFIGURED_HERE/);
      const bad = await createPod(layer('x', 'CONFIG model = m1'), {}, 'opencode');
      const badPod = await waitStatus(bad, ['completed', 'failed']);
      expect(badPod.status).toBe('failed');
      expect(badPod.error_message).toMatch(/provider\/model/);
    });
  });

  it('runner selection: unknown runner 400; a full runner is not available (409 when named); one lacking the agent 409; an offline one 409', async () => {
    const unknown = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"', runner_id: 999_999 });
    expect(unknown.status).toBe(400);
    expect((unknown.body as ErrorBody).code).toBe('VALIDATION_FAILED');

    // A second runner with one slot and no agent CLIs on its PATH (only bash: the shell agent).
    const small = await startRunnerProcess({
      server: server.url,
      token: await registrationToken(),
      workDir: path.join(scratch, 'small-runner'),
      name: 'small',
      maxPods: 1,
      env: { PATH: runnerPath(), HOME: home },
    });
    await waitFor(async () => ((await api('GET', `${ORG}/runners/${small.runnerId}`)).body as { runner: { status: string } }).runner.status === 'online', {
      what: 'the small runner to be online',
    });
    const noAgent = await api('POST', `${ORG}/pods`, { agent_slug: 'claude-code', agentfile_layer: 'PROMPT "x"', runner_id: small.runnerId });
    expect(noAgent.status).toBe(409);
    expect((noAgent.body as ErrorBody).code).toBe('RUNNER_UNAVAILABLE');
    expect((noAgent.body as ErrorBody).error).toMatch(/agent/);

    const long = await createPod(layer('sleep 300'), { runner_id: small.runnerId });
    await waitStatus(long, ['running']);
    const available = (await api('GET', `${ORG}/runners/available`)).body as { runners: { id: number }[] };
    expect(available.runners.map((r) => r.id)).toContain(runner.runnerId);
    expect(available.runners.map((r) => r.id)).not.toContain(small.runnerId);
    // Named and full: the pod waits for that runner (docs/agents.md), not counted on it.
    const full = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"', runner_id: small.runnerId });
    expect(full.status, full.text).toBe(201);
    const waiting = (full.body as { pod: { pod_key: string; status: string } }).pod;
    expect(waiting.status).toBe('queued');
    const listed = ((await api('GET', `${ORG}/runners/${small.runnerId}`)).body as { runner: { pod_count: number } }).runner;
    expect(listed.pod_count).toBe(1);
    expect((await api('POST', `${ORG}/pods/${waiting.pod_key}/terminate`)).status).toBe(200);
    expect((await getPod(waiting.pod_key)).status).toBe('terminated');
    // Without runner_id the pod goes to a runner with room.
    const elsewhere = await createPod(layer('true'));
    expect((await waitStatus(elsewhere, ['completed', 'failed'])).runner_id).toBe(runner.runnerId);

    expect((await api('POST', `${ORG}/pods/${long}/terminate`)).status).toBe(200);
    await small.stop();
    await waitFor(async () => ((await api('GET', `${ORG}/runners/${small.runnerId}`)).body as { runner: { status: string } }).runner.status === 'offline', {
      what: 'the stopped runner to be offline',
    });
    const offline = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"', runner_id: small.runnerId });
    expect(offline.status).toBe(409);
    expect((offline.body as ErrorBody).code).toBe('RUNNER_UNAVAILABLE');
    expect((offline.body as ErrorBody).error).toMatch(/offline/);
  });
});

describe.each(DATABASES)('pods without any runner (%s)', (kind) => {
  it('POST /pods is 503 NO_AVAILABLE_RUNNER (no runner has the agent); /runners and /runners/available are empty', async () => {
    const database = await createProcessTestDatabase(kind);
    try {
      const server = await startServerProcess({ dataDir: database.dataDir, env: { ...database.env, DROVER_LOG_LEVEL: 'warn' } });
      const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
      const response = await http(server.url, 'POST', `${ORG}/pods`, { key, body: { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' } });
      expect(response.status).toBe(503);
      expect((response.body as ErrorBody).code).toBe('NO_AVAILABLE_RUNNER');
      expect((await http(server.url, 'GET', `${ORG}/runners`, { key })).body).toEqual({ runners: [] });
      expect((await http(server.url, 'GET', `${ORG}/runners/available`, { key })).body).toEqual({ runners: [] });
      expect((await http(server.url, 'GET', `${ORG}/pods`, { key })).body).toMatchObject({ pods: [], total: 0 });
      await server.stop();
    } finally {
      await database.cleanup();
    }
  });
});
