/**
 * The README and docs work as written for someone who has only the repository: no link leaves it,
 * the README's loop example, sent as it stands to a fresh `drover serve` (embedded default,
 * local runner), runs its script once, and the README's shell blocks marked
 * `<!-- readme-test: run -->` run in order, as a reader would run them, on a fresh data directory.
 * Its "A first real agent" walk-through is followed step by step too, with the real Claude Code CLI
 * (the cached one of test/helpers/agent-clis.ts) talking to a model stand-in on loopback instead of
 * Anthropic, and a local bare repository instead of GitHub.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/runner-process.ts';
import { DROVER_BIN, REPO_ROOT, childEnv, createProcessTestDatabase, http, startServerProcess } from '../helpers/server-process.ts';
import { ensureAgentClis } from '../helpers/agent-clis.ts';
import { startModelMock } from '../helpers/model-mocks/server.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Runs a bash script in `cwd` as a reader would, `npx drover` being this repository's drover (see the last test). */
async function runShell(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const npx = `npx() { if [ "$1" = drover ]; then shift; node ${JSON.stringify(DROVER_BIN)} "$@"; else command npx "$@"; fi; }`;
  const child = spawn('bash', ['-c', ['set -euo pipefail', npx, script].join('\n')], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  if (process.env.README_TEST_TRACE) child.stderr.on('data', (c: string) => process.stderr.write(c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

const documents = () => [path.join(REPO_ROOT, 'README.md'), ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(REPO_ROOT, 'docs', f))];

describe('README and docs', () => {
  it('link nowhere outside the repository, and every relative link exists', () => {
    for (const file of documents()) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/\.\.\/shared\b/);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        expect(fs.existsSync(path.resolve(path.dirname(file), target)), `${path.relative(REPO_ROOT, file)} links to ${target}`).toBe(true);
      }
    }
  });

  it('every code fence is closed, so no heading or paragraph is swallowed by one', () => {
    for (const file of documents()) {
      let open = false;
      const headings: string[] = [];
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (/^\s*```/.test(line)) open = !open;
        else if (!open && /^#{1,4} /.test(line)) headings.push(line);
      }
      expect(open, `${path.relative(REPO_ROOT, file)} ends inside a code fence`).toBe(false);
      // Said where a reader needs it (the issue found it unsaid): how long a registration token lasts.
      if (file.endsWith('README.md')) expect(fs.readFileSync(file, 'utf8')).toMatch(/expires after 24 hours/);
      if (file.endsWith('README.md')) expect(headings).toEqual(expect.arrayContaining(['### Runners and pods', '### Loops', '### The command line client', '### A first real agent']));
    }
  });

  it("the README's loop example runs its script once", async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const create = /curl -s -X POST http:\/\/127\.0\.0\.1:7070\/api\/v1\/ext\/orgs\/default\/loops [^\n]*\\\n[^\n]*\\\n\s*-d '([^']+)'/.exec(readme);
    expect(create, 'the loop example in the README').not.toBeNull();
    const body = JSON.parse(create![1]) as Record<string, unknown>;
    expect(body.execution_mode).toBe('direct');
    const trigger = /loops\/([a-z0-9-]+)\/trigger[^\n]*\\\n[^\n]*-d '([^']+)'/.exec(readme);
    expect(trigger, 'the trigger example in the README').not.toBeNull();

    const database = await createProcessTestDatabase('sqlite');
    cleanups.push(() => database.cleanup());
    const server = await startServerProcess({ dataDir: database.dataDir, env: database.env, localRunner: true });
    cleanups.push(async () => void (await server.stop('SIGTERM')));
    await server.localRunnerConnected(30_000);
    const key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const org = `${server.url}/api/v1/ext/orgs/default`;

    const loop = await http(org, 'POST', '/loops', { key, body });
    expect(loop.status, loop.text).toBe(201);
    expect((loop.body as { loop: { slug: string } }).loop.slug).toBe(trigger![1]);
    const run = await http(org, 'POST', `/loops/${trigger![1]}/trigger`, { key, body: JSON.parse(trigger![2]) });
    expect(run.status, run.text).toBe(201);
    const runId = (run.body as { run: { id: number } }).run.id;
    const finished = await waitFor(
      async () => {
        const current = (await http(org, 'GET', `/loops/${trigger![1]}/runs/${runId}`, { key })).body as { run: { status: string; pod_key: string; error_message: string | null } };
        return ['completed', 'failed', 'timeout', 'cancelled'].includes(current.run.status) ? current.run : undefined;
      },
      { timeout: 60_000, what: 'the run to end' },
    );
    expect(finished).toMatchObject({ status: 'completed', error_message: null });
    const output = ((await http(org, 'GET', `/pods/${finished.pod_key}/output`, { key })).body as { output: string }).output;
    expect(output.match(/triage web/g)).toHaveLength(1);
  });

  it("the README's marked shell blocks run in order, as written, on a fresh data directory", async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/<!-- readme-test: run -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]);
    expect(blocks.length, 'marked blocks').toBeGreaterThanOrEqual(8);
    // The reader's directory: `npm start` there makes ./.drover, which the blocks read.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-readme-'));
    cleanups.push(async () => fs.rmSync(cwd, { recursive: true, force: true }));
    const server = await startServerProcess({ dataDir: path.join(cwd, '.drover'), localRunner: true });
    cleanups.push(async () => void (await server.stop('SIGTERM')));
    await server.localRunnerConnected(30_000);
    const address = new URL(server.url).host;
    // What differs from a reader's run: the server's port (not 7070), curl failing on an HTTP error
    // (-f) so that a wrong id fails the test, and `npx drover` run without npx's own start-up (the
    // test below checks that `npx drover` resolves to this repository's bin).
    const script = blocks.map((block, i) => `echo "### block ${i + 1}" >&2\n${block.replaceAll('127.0.0.1:7070', address).replace(/\bcurl -s /g, 'curl -sSf ')}\necho >&2`).join('\n');
    const home = path.join(cwd, 'home');
    fs.mkdirSync(home);
    const env = childEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), DROVER_SERVER_URL: server.url, DROVER_API_URL: undefined, DROVER_ORG: undefined, DROVER_API_KEY: undefined });
    const { code, stdout, stderr } = await runShell(script, cwd, env);
    expect(code, `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`).toBe(0);
    expect(stdout).toContain('hello from a pod');
    expect(stdout).toMatch(/^hi$/m);
    expect(stdout).toMatch(/Triage is done/);
    expect(stdout).toMatch(/^resolved_prompt +echo triage web$/m);
  }, 400_000);

  it('"A first real agent", step by step: Claude Code on a stand-in model, its work a delivered branch of a bare repository', async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### A first real agent'), readme.indexOf('### Loops'));
    // The section's shell blocks, indented: the CLI's sign-in, the repository, the pod, the review.
    const [login, register, run, review] = [...section.matchAll(/^ {3}```sh\n([\s\S]*?)\n {3}```/gm)].map((m) => m[1].replace(/^ {3}/gm, ''));
    expect(review, 'four shell blocks').toBeDefined();
    for (const said of ['.drover/runner/credentials.json', '.drover/runner/agent-home/', '`npx drover runners get 1`', 'DROVER_LOCAL_RUNNER_ALLOW_HOSTS']) expect(section).toContain(said);

    const clis = await ensureAgentClis();
    const mock = await startModelMock();
    cleanups.push(() => mock.close());
    const modelKey = 'sk-ant-stand-in-key-of-the-readme-walk-through';
    mock.requiredKey = modelKey;
    // The model's answers to the README's prompt (which names no stand-in script): look, fix, say so.
    mock.script('default', [{ shell: 'cat src/date.ts' }, { shell: "sed -i 's/getYear()/getFullYear()/' src/date.ts" }, { text: 'Fixed src/date.ts: getFullYear, not getYear.' }]);

    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-readme-agent-'));
    cleanups.push(async () => fs.rmSync(cwd, { recursive: true, force: true }));
    // "One of your repositories": a bare repository with a bug on main.
    const bare = path.join(cwd, 'web.git');
    const git = (args: string[], dir = cwd) => execFileSync('git', ['-c', 'user.name=Reader', '-c', 'user.email=reader@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' });
    git(['init', '-q', '--bare', bare]);
    git(['clone', '-q', bare, 'web']);
    fs.mkdirSync(path.join(cwd, 'web', 'src'));
    fs.writeFileSync(path.join(cwd, 'web', 'src', 'date.ts'), 'export const year = (d: Date): number => d.getYear();\n');
    git(['add', '.'], path.join(cwd, 'web'));
    git(['commit', '-qm', 'initial'], path.join(cwd, 'web'));
    git(['push', '-q', 'origin', 'HEAD:main'], path.join(cwd, 'web'));

    // 1. The program on the PATH `npm start` runs with (the cached CLI, as `npm install -g` would
    // put it); 4. the stand-in on loopback allowed as the README says.
    const serverEnv = { PATH: `${clis.binDir}:${process.env.PATH}`, DROVER_LOCAL_RUNNER_ALLOW_HOSTS: new URL(mock.url).host };
    const dataDir = path.join(cwd, '.drover');
    const start = async () => {
      const server = await startServerProcess({ dataDir, localRunner: true, env: serverEnv, timeoutMs: 90_000 });
      cleanups.push(async () => void (await server.stop('SIGTERM')));
      await server.localRunnerConnected(90_000);
      return server;
    };
    const first = await start();
    // 2. The credential; 3. the agent's home.
    const runnerDir = path.join(dataDir, 'runner');
    fs.writeFileSync(path.join(runnerDir, 'credentials.json'), JSON.stringify({ ANTHROPIC_API_KEY: modelKey }), { mode: 0o600 });
    fs.mkdirSync(path.join(runnerDir, 'agent-home', '.claude'), { recursive: true });
    fs.writeFileSync(path.join(runnerDir, 'agent-home', '.claude', 'settings.json'), JSON.stringify({ env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }));
    // Restart `npm start`.
    expect(await first.stop('SIGTERM', 30_000)).toBe(0);
    const server = await start();
    const home = path.join(cwd, 'home');
    fs.mkdirSync(home);
    const env = childEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), DROVER_SERVER_URL: server.url, DROVER_API_URL: undefined, DROVER_ORG: undefined, DROVER_API_KEY: undefined });
    const shell = async (script: string) => {
      const result = await runShell(script, cwd, env);
      expect(result.code, `${script}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`).toBe(0);
      return result;
    };
    // The sign-in, after the restart: the test's server is on a new port each start, a reader's on 7070.
    expect(login).toContain('http://127.0.0.1:7070');
    await shell(login.replace('http://127.0.0.1:7070', server.url));
    expect((await shell('npx drover runners get 1')).stdout).toMatch(/claude-code/);

    // 5. The repository: the local bare one in place of GitHub (no token needed).
    const local = register.replace('GH_TOKEN=ghp_… ', '').replace('--provider github --url https://github.com/you/web.git --token-env GH_TOKEN', `--provider git --url ${bare}`);
    expect(local, 'the registration as the test changes it').not.toMatch(/github|GH_TOKEN/);
    await shell(local);

    // 6. The pod, the model's URL being the stand-in's.
    expect(run).toContain('https://api.anthropic.com');
    const pod = await shell(run.replace('https://api.anthropic.com', mock.url));
    const key = /^pod (\S+) completed \(exit code 0\)$/m.exec(pod.stderr)?.[1];
    expect(key, pod.stderr).toBeDefined();
    const pretty = (await shell(`npx drover pods logs ${key} --pretty`)).stdout;
    expect(pretty).toContain("sed -i 's/getYear()/getFullYear()/' src/date.ts");
    expect(pretty).toContain('Fixed src/date.ts: getFullYear, not getYear.');
    expect(pretty).not.toMatch(/^\s*\{"/m);
    expect(mock.requestsOf('default').length).toBeGreaterThanOrEqual(3);

    // 7. The delivered branch.
    const apiKey = fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await waitFor(
      async () => {
        const view = (await http(`${server.url}/api/v1/ext/orgs/default`, 'GET', `/pods/${key}`, { key: apiKey })).body as { pod: { delivery: { status: string } | null } };
        return view.pod.delivery?.status === 'pushed';
      },
      { timeout: 60_000, what: `the delivery of pod ${key}` },
    );
    expect((await shell(`npx drover pods get ${key}`)).stdout).toContain(`drover/${key}`);
    const diff = (await shell(`cd web\n${review.replaceAll('KEY', key!)}`)).stdout;
    expect(diff).toContain('+export const year = (d: Date): number => d.getFullYear();');
    expect(diff).toContain('-export const year = (d: Date): number => d.getYear();');
  }, 600_000);

  it('`npx drover` runs this repository\'s drover (the README uses it; `npm link` puts it on PATH)', async () => {
    const child = spawn('npx', ['--no-install', 'drover', '--version'], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout.trim()).toBe((JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });
});
