/**
 * The pod output quota end to end (docs/decisions.md): a real `drover serve` with
 * DROVER_POD_OUTPUT_BYTES_PER_SEC=65536 and a real `drover runner`. The server tells the runner the
 * organization's limit; the runner's launcher drops what a pod prints over it as it reads it (so a
 * flood costs neither the runner's link nor the server); the output says so in one line when
 * dropping starts and once more at the end with the count; an administrator's override reaches
 * the runner within seconds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { runnerPath, startRunnerProcess, tempDir, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { createProcessTestDatabase, http, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const ADMIN_TOKEN = 'drvadm_e2e_output_quota_admin_token_012345';
const LIMIT = 65_536;
const NOTE = /^\[drover\] output over this organization's limit of (\d+) bytes\/s \(pod_output_bytes_per_sec\): the excess is dropped$/;
const SUMMARY = /^\[drover\] (\d+) bytes of this pod's output were dropped \(over the pod_output_bytes_per_sec quota\)$/;

describe.each(DATABASES)('output quota end to end (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let runner: RunnerProcess;
  let apiKey: string;
  let scratch: string;

  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, urlPath, { key: apiKey, body });

  async function run(script: string): Promise<{ output: string; total_bytes: number; truncated: boolean }> {
    const created = await api('POST', `${ORG}/pods`, { agent_slug: 'shell', agentfile_layer: `PROMPT <<END\n${script}\nEND` });
    expect(created.status, created.text).toBe(201);
    const key = (created.body as { pod: { pod_key: string } }).pod.pod_key;
    await waitFor(async () => ['completed', 'failed'].includes(((await api('GET', `${ORG}/pods/${key}`)).body as { pod: { status: string } }).pod.status), {
      timeout: 60_000,
      what: `pod ${key} to end`,
    });
    expect(((await api('GET', `${ORG}/pods/${key}`)).body as { pod: { status: string } }).pod.status).toBe('completed');
    return (await api('GET', `${ORG}/pods/${key}/output`)).body as { output: string; total_bytes: number; truncated: boolean };
  }
  const notes = (text: string) => text.split('\n').filter((line) => line.startsWith('[drover]'));

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = tempDir('output-quota');
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: ADMIN_TOKEN, DROVER_LOG_LEVEL: 'warn', DROVER_POD_OUTPUT_BYTES_PER_SEC: String(LIMIT) },
    });
    apiKey = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    const token = await http(server.url, 'POST', '/api/v1/admin/orgs/default/runner-tokens', { bearer: ADMIN_TOKEN, body: {} });
    runner = await startRunnerProcess({
      server: server.url,
      token: (token.body as { token: string }).token,
      workDir: path.join(scratch, 'runner'),
      env: { PATH: runnerPath(), HOME: scratch, LANG: 'C.UTF-8', DROVER_RUNNER_HEARTBEAT_MS: '500' },
    });
    await waitFor(async () => (((await api('GET', `${ORG}/runners/${runner.runnerId}`)).body as { runner?: { status: string } }).runner?.status ?? '') === 'online');
  });

  afterAll(async () => {
    await runner?.stop();
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('a pod printing 20 MB keeps about its quota: one note when dropping starts, one with the count at the end', async () => {
    const printed = 20 * 1024 * 1024;
    const out = await run(`head -c ${printed} /dev/zero | tr '\\0' x\nsleep 1.5\necho THE-END`);
    const lines = notes(out.output);
    expect(lines, out.output.slice(-500)).toHaveLength(2);
    expect(NOTE.exec(lines[0])?.[1]).toBe(String(LIMIT));
    const dropped = Number(SUMMARY.exec(lines[1])?.[1]);
    // The burst of x, the note on a line of its own, x at the quota's rate, THE-END (after a pause: kept), the count.
    const shape = /^(x+)\n\[drover\][^\n]*\n(x*)THE-END\n\[drover\][^\n]*\n$/.exec(out.output);
    expect(shape, out.output.slice(-500)).not.toBeNull();
    const kept = shape![1].length + shape![2].length + 'THE-END\n'.length;
    // Whatever the pod printed was either kept or counted as dropped.
    expect(kept + dropped).toBe(printed + 'THE-END\n'.length);
    expect(kept).toBeGreaterThanOrEqual(LIMIT);
    expect(kept).toBeLessThan(LIMIT * 6);
    expect(out.total_bytes).toBe(Buffer.byteLength(out.output));
  });

  it("an administrator's override reaches the runner: 0 lifts the limit for the organization's pods", async () => {
    const patched = await http(server.url, 'PATCH', '/api/v1/admin/orgs/default/quotas', { bearer: ADMIN_TOKEN, body: { pod_output_bytes_per_sec: 0 } });
    expect(patched.status, patched.text).toBe(200);
    // A link rereads its organization's limit every 10 s and passes a change on at the next heartbeat:
    // await the first pod whose burst is no longer cut (with the limit on, 1 MB in a burst is).
    await waitFor(async () => notes((await run(`head -c 1000000 /dev/zero | tr '\\0' z`)).output).length === 0, { timeout: 45_000, what: 'the lifted limit to reach the runner' });
    const out = await run(`head -c 3000000 /dev/zero | tr '\\0' y`);
    expect(notes(out.output)).toEqual([]);
    expect(out.total_bytes).toBe(3_000_000);
  });
});
