/**
 * The README and docs work as written for someone who has only the repository: no link leaves it,
 * and the README's loop example, sent as it stands to a fresh `drover serve` (embedded default,
 * local runner), runs its script once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/runner-process.ts';
import { REPO_ROOT, createProcessTestDatabase, http, startServerProcess } from '../helpers/server-process.ts';

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
});
