/**
 * The streaming commands of the command line client against the streams (docs/events.md) as real
 * `drover` child processes against a real `drover serve` with its local runner: `pods run
 * --follow` (the agent's output, then its exit code), `pods logs -f`, `channels tail` and
 * `events --json` (one JSON line per event). (`loops trigger --wait`: client-cli.test.ts.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { DROVER_BIN, REPO_ROOT, childEnv, createProcessTestDatabase, http, runDrover, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/runner-process.ts';

const ORG = '/api/v1/ext/orgs/default';

describe.each(DATABASES)('streaming client commands (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;
  let scratch: string;
  const followers: ChildProcess[] = [];

  const env = () => ({ HOME: scratch, DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key });
  const cli = (args: string[]) => runDrover(args, { env: env(), cwd: scratch, timeoutMs: 60_000 });
  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `${ORG}${urlPath}`, { key, body });

  /** A long-running command, its stdout collected as it comes. */
  function follow(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, [DROVER_BIN, ...args], { cwd: REPO_ROOT, env: childEnv(env()), stdio: ['ignore', 'pipe', 'pipe'] });
    followers.push(child);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.resume();
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return { child, output: () => stdout, exited };
  }

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-cli-streams-'));
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, DROVER_ADMIN_TOKEN: 'drvadm_cli_streams_admin_token_0123456789', DROVER_LOCAL_RUNNER: 'true', DROVER_LOG_LEVEL: 'warn' },
      localRunner: true,
    });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await waitFor(async () => ((await api('GET', '/runners')).body as { runners: { status: string }[] }).runners.some((r) => r.status === 'online') || undefined, {
      timeout: 30_000,
      what: 'the local runner online',
    });
  }, 60_000);

  afterAll(async () => {
    for (const child of followers) child.kill('SIGKILL');
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('pods run --follow prints the agent’s output as it comes and exits with its exit code; pods logs -f replays it', async () => {
    const run = await cli(['pods', 'run', '--agent', 'shell', '--prompt', 'for i in 1 2 3; do echo "step $i"; sleep 0.2; done; exit 5', '--follow']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toMatch(/step 1\nstep 2\nstep 3\n/);
    const ok = await cli(['pods', 'run', '--agent', 'shell', '--prompt', 'echo fine', '--follow', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const lines = ok.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({ end: { status: 'completed', exit_code: 0 } });
    expect(lines.filter((l) => 'data' in l).map((l) => l.data).join('')).toContain('fine\n');

    const { pods } = (await api('GET', '/pods?limit=2')).body as { pods: { key: string; status: string }[] };
    const failed = pods.find((p) => p.status === 'failed')!;
    const logs = await cli(['pods', 'logs', failed.key, '-f']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/step 1\nstep 2\nstep 3\n/);
  }, 90_000);

  it('pod output reaches the terminal without its control sequences (pods run --follow, pods logs, pods logs -f) unless --raw; --json escapes them', async () => {
    // Colour (CSI), a window title (OSC ended by BEL), a clipboard write (OSC ended by ST), a reset
    // (ESC c), a cursor move written as the C1 control U+009B, a carriage return and a backspace.
    const script = String.raw`printf 'a\033[31mred\033[0m \033]0;pwned\007b \033]52;c;ZXZpbA==\033\\c \033cd \302\2332Je\tf\rg\010h\n'`;
    const shown = 'ared b c d e\tfgh\n';
    // eslint-disable-next-line no-control-regex -- what must not reach the terminal
    const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
    const run = await cli(['pods', 'run', '--agent', 'shell', '--prompt', script, '--follow']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(shown);
    const { pods } = (await api('GET', '/pods?limit=1')).body as { pods: { key: string }[] };
    const podKey = pods[0].key;
    for (const args of [['pods', 'logs', podKey], ['pods', 'logs', podKey, '-f']]) {
      const logs = await cli(args);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toBe(shown);
      expect(logs.stdout).not.toMatch(controls);
    }
    // --raw: as the agent wrote it.
    const raw = await cli(['pods', 'logs', podKey, '--raw']);
    expect(raw.stdout).toContain('\u001b]0;pwned\u0007');
    expect(raw.stdout).toContain('\u009b2J');
    // --json: the output intact, every control escaped in the JSON text (the C1 one too).
    for (const args of [['pods', 'logs', podKey, '--json'], ['pods', 'logs', podKey, '-f', '--json']]) {
      const json = await cli(args);
      expect(json.code, json.stderr).toBe(0);
      expect(json.stdout).not.toMatch(controls);
      const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { output?: string; data?: string });
      const output = lines.map((line) => line.output ?? line.data ?? '').join('');
      expect(output).toContain('\u001b]52;c;ZXZpbA==\u001b\\');
      expect(output).toContain('\u009b2J');
    }
  }, 90_000);

  it('events --json prints one JSON line per event; channels tail prints the channel’s messages as they come', async () => {
    const events = follow(['events', '--types', 'ticket.created,message.created', '--json']);
    const { channel } = (await api('POST', '/channels', { name: 'cli-tail' })).body as { channel: { id: number } };
    const tail = follow(['channels', 'tail', String(channel.id)]);
    // Each follower is connected once it has seen something written after it started.
    await waitFor(async () => {
      await api('POST', '/tickets', { type: 'task', title: 'probe' });
      return events.output().includes('"ticket.created"') || undefined;
    }, { timeout: 30_000, interval: 500, what: 'drover events to connect' });
    await waitFor(async () => {
      await api('POST', `/channels/${channel.id}/messages`, { content: 'probe' });
      return tail.output().includes('probe') || undefined;
    }, { timeout: 30_000, interval: 500, what: 'drover channels tail to connect' });
    await api('POST', '/tickets', { type: 'bug', title: 'seen by the CLI' });
    await api('POST', `/channels/${channel.id}/messages`, { content: 'hello from the API' });
    await waitFor(() => (events.output().includes('hello from the API') && tail.output().includes('hello from the API')) || undefined, { timeout: 30_000, what: 'the last message' });

    const lines = events.output().trim().split('\n').map((line) => JSON.parse(line) as { id: number; type: string; created_at: string; data: Record<string, { title?: string; content?: string }> });
    for (const [i, line] of lines.entries()) {
      expect(Object.keys(line).sort()).toEqual(['actor', 'created_at', 'data', 'id', 'type']);
      if (i > 0) expect(line.id).toBeGreaterThan(lines[i - 1].id);
    }
    expect(lines.some((l) => l.type === 'ticket.created' && l.data.ticket.title === 'seen by the CLI')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'message.created', data: { message: { content: 'hello from the API', channel_id: channel.id } } });
    events.child.kill('SIGTERM');
    tail.child.kill('SIGTERM');
    expect(await events.exited).toBe(143);
    expect(await tail.exited).toBe(143);
  }, 90_000);
});
