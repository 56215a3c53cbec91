/**
 * The README and docs work as written for someone who has only the repository: no link leaves it,
 * the README's loop example, sent as it stands to a fresh `drover serve` (embedded default,
 * local runner), runs its script once, and the README's shell blocks marked
 * `<!-- readme-test: run -->` run in order, as a reader would run them, on a fresh data directory.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/runner-process.ts';
import { DROVER_BIN, REPO_ROOT, childEnv, createProcessTestDatabase, http, startServerProcess } from '../helpers/server-process.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

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
    await waitFor(() => /^Local runner \d+ connected/m.test(server.stdout), { timeout: 30_000, what: 'the local runner' });
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
    await waitFor(() => /^Local runner \d+ connected/m.test(server.stdout), { timeout: 30_000, what: 'the local runner' });
    const address = new URL(server.url).host;
    // What differs from a reader's run: the server's port (not 7070), curl failing on an HTTP error
    // (-f) so that a wrong id fails the test, and `npx drover` run without npx's own start-up (the
    // test below checks that `npx drover` resolves to this repository's bin).
    const script = [
      'set -euo pipefail',
      `npx() { if [ "$1" = drover ]; then shift; node ${JSON.stringify(DROVER_BIN)} "$@"; else command npx "$@"; fi; }`,
      ...blocks.map((block, i) => `echo "### block ${i + 1}" >&2\n${block.replaceAll('127.0.0.1:7070', address).replace(/\bcurl -s /g, 'curl -sSf ')}\necho >&2`),
    ].join('\n');
    const home = path.join(cwd, 'home');
    fs.mkdirSync(home);
    const env = childEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), DROVER_SERVER_URL: server.url, DROVER_API_URL: undefined, DROVER_ORG: undefined, DROVER_API_KEY: undefined });
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    if (process.env.README_TEST_TRACE) child.stderr.on('data', (c: string) => process.stderr.write(c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`).toBe(0);
    expect(stdout).toContain('hello from a pod');
    expect(stdout).toMatch(/^hi$/m);
    expect(stdout).toMatch(/Triage is done/);
    expect(stdout).toMatch(/^resolved_prompt +echo triage web$/m);
  }, 400_000);

  it('`npx drover` runs this repository\'s drover (the README uses it; `npm link` puts it on PATH)', async () => {
    const child = spawn('npx', ['--no-install', 'drover', '--version'], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout.trim()).toBe((JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });
});
