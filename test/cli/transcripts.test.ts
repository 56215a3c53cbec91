/**
 * Transcripts on a terminal (docs/cli.md "Pods"; docs/transcripts.md): `drover pods logs --pretty`,
 * `pods logs -f`, `pods run --follow`, as real `drover` processes against a real `drover serve`
 * with its local runner (bubblewrap), on both databases.
 *
 * The pods' agents are real built-in agents whose programs are stand-ins: `claude` and `codex`
 * scripts on the local runner's PATH that print what the real CLIs printed
 * (test/fixtures/transcripts/*-work.out) whatever they are asked, and answer `--version`. So a
 * pod's agent is `claude-code` and its output is read by that agent's parser, as in production.
 * Terminals are real pseudo-terminals (`script`), for what the CLI does by default on one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTranscript } from '../../src/agents/transcript/index.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { DROVER_BIN, childEnv, createProcessTestDatabase, http, runDrover, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/runner-process.ts';

const ORG = '/api/v1/ext/orgs/default';
const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', name), 'utf8');
const CLAUDE = fixture('claude-code-work.out');
const CODEX = fixture('codex-work.out');
const ESC = '\x1b';

/** A program that answers `--version` and otherwise prints `output` exactly. */
function standIn(version: string, output: string): string {
  return `#!/bin/sh\nif [ "$1" = "--version" ]; then echo '${version}'; exit 0; fi\ncat <<'DROVER_RECORDED_OUTPUT'\n${output}DROVER_RECORDED_OUTPUT\n`;
}

/** What the transcript view must show for the recorded `work` scenario, whichever agent printed it. */
function expectWorkShown(text: string): void {
  const lines = text.split('\n');
  expect(lines).toContain("$ printf 'hello\\n' > notes.txt && cat notes.txt");
  expect(lines.some((line) => /^ {2}│ hello$/.test(line))).toBe(true);
  expect(lines.some((line) => line.startsWith('✎ ') && line.includes('greeting.txt'))).toBe(true);
  expect(lines).toContain('$ cat missing.txt');
  expect(lines.some((line) => line.startsWith('  ✗ ') && line.includes('missing.txt: No such file or directory'))).toBe(true);
  expect(lines).toContain('Done: wrote greeting.txt; missing.txt does not exist.');
  expect(lines.filter((line) => line.trimStart().startsWith('{"'))).toEqual([]);
  // Calls, results and the final text in the order the agent printed them.
  const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
  const order = [/^\$ printf/, /│ hello$/, /^✎ /, /^\$ cat missing/, /^ {2}✗ /, /^Done: /].map(at);
  expect(order).toEqual([...order].sort((a, b) => a - b));
}

describe.each(DATABASES)('transcripts in the command line client (%s)', (kind) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;
  let scratch: string;

  const env = () => ({ HOME: scratch, DROVER_API_URL: server.url, DROVER_ORG: 'default', DROVER_API_KEY: key });
  const cli = (args: string[]) => runDrover(args, { env: env(), cwd: scratch, timeoutMs: 60_000 });
  const api = (method: string, urlPath: string, body?: unknown) => http(server.url, method, `${ORG}${urlPath}`, { key, body });

  /** `drover …` on a pseudo-terminal: what a person at a terminal sees (line ends as the terminal sends them). */
  function onTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
    const quoted = [process.execPath, DROVER_BIN, ...args].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qec', quoted, '/dev/null'], { cwd: scratch, env: childEnv({ ...env(), TERM: 'dumb', NO_COLOR: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    return new Promise((resolve) =>
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output: output.replace(/\r\n/g, '\n') });
      }),
    );
  }

  /** A pod of this agent, run to its end; its key. */
  async function finishedPod(agent: string, prompt: string): Promise<string> {
    const created = await api('POST', '/pods', { agent_slug: agent, agentfile_layer: `PROMPT ${JSON.stringify(prompt)}` });
    expect(created.status, created.text).toBe(201);
    const podKey = (created.body as { pod: { pod_key: string } }).pod.pod_key;
    await waitFor(async () => ['completed', 'failed'].includes(((await api('GET', `/pods/${podKey}`)).body as { pod: { status: string } }).pod.status) || undefined, { timeout: 60_000, what: `pod ${podKey} to end` });
    return podKey;
  }

  beforeAll(async () => {
    database = await createProcessTestDatabase(kind);
    // Not under /tmp: the pod sandbox gives a pod a /tmp of its own; the runner's PATH is visible in it.
    scratch = fs.mkdtempSync('/var/tmp/drover-cli-transcripts-');
    fs.chmodSync(scratch, 0o755);
    const bin = path.join(scratch, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'claude'), standIn('2.1.330 (Claude Code)', CLAUDE), { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'codex'), standIn('codex-cli 0.169.0', CODEX), { mode: 0o755 });
    server = await startServerProcess({
      dataDir: database.dataDir,
      env: { ...database.env, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, DROVER_ADMIN_TOKEN: 'drvadm_cli_transcripts_admin_token_0123', DROVER_LOCAL_RUNNER: 'true', DROVER_LOG_LEVEL: 'warn' },
      localRunner: true,
    });
    key = fs.readFileSync(path.join(database.dataDir, 'bootstrap-api-key'), 'utf8').trim();
    await waitFor(
      async () => {
        const { runners } = (await api('GET', '/runners')).body as { runners: { status: string; agents: { slug: string }[] }[] };
        return runners.some((r) => r.status === 'online' && r.agents.some((a) => a.slug === 'claude-code') && r.agents.some((a) => a.slug === 'codex')) || undefined;
      },
      { timeout: 30_000, what: 'the local runner online with claude-code and codex' },
    );
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('pods logs --pretty: a claude-code pod’s calls, their folded output, the file write as a diff, the failure marked, the final text; -f shows the same', async () => {
    const podKey = await finishedPod('claude-code', 'Do the work.');
    const raw = await cli(['pods', 'logs', podKey]);
    expect(raw.code, raw.stderr).toBe(0);
    expect(raw.stdout).toBe(CLAUDE);

    const pretty = await cli(['pods', 'logs', podKey, '--pretty']);
    expect(pretty.code, pretty.stderr).toBe(0);
    expectWorkShown(pretty.stdout);
    expect(pretty.stdout).toContain('+ Hello, Drover!\n');
    expect(pretty.stdout).toContain('· Finished (4 turns, $0.0242)\n');
    expect(pretty.stdout).not.toContain(ESC);

    const followed = await cli(['pods', 'logs', podKey, '-f', '--pretty']);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toBe(pretty.stdout);

    // --tail BYTES: the entries of the output's last BYTES bytes (the last event lines: the final text and the end).
    const tail = await cli(['pods', 'logs', podKey, '--pretty', '--tail', String(Buffer.byteLength(CLAUDE.split('\n').slice(-3).join('\n')))]);
    expect(tail.stdout).toBe('Done: wrote greeting.txt; missing.txt does not exist.\n· Finished (4 turns, $0.0242)\n');

    const json = await cli(['pods', 'logs', podKey, '--pretty', '--json']);
    expect(json.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual(parseTranscript('claude-code', CLAUDE));
  }, 120_000);

  it('on a terminal the transcript is the default for built-in agents (--raw: the output as printed); pods run --follow too, with the agent’s exit code', async () => {
    const podKey = await finishedPod('claude-code', 'Do the work.');
    const logs = await onTerminal(['pods', 'logs', podKey]);
    expect(logs.code).toBe(0);
    expectWorkShown(logs.output);
    const raw = await onTerminal(['pods', 'logs', podKey, '--raw']);
    expect(raw.output).toContain('{"type":"system","subtype":"init"');

    const run = await onTerminal(['pods', 'run', '--agent', 'codex', '--prompt', 'Do the work.', '--follow']);
    expect(run.code).toBe(0);
    expectWorkShown(run.output);
    expect(run.output).toMatch(/^ {4}\/\S+\/codex-work\/greeting\.txt \(added\)$/m);
    expect(run.output).toMatch(/pod p-[a-z0-9-]+ completed \(exit code 0\)/);

    // A shell pod prints lines of its own: shown as printed, on a terminal too.
    const shell = await onTerminal(['pods', 'run', '--agent', 'shell', '--prompt', "echo '{\"type\":\"x\"}'; echo plain", '--follow']);
    expect(shell.output).toContain('{"type":"x"}\nplain\n');
  }, 120_000);

  it('--format reads a shell pod’s output as an agent’s (a script that runs the CLI itself); text from the agent cannot drive the terminal', async () => {
    const hostile = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `before ${ESC}]0;owned title\x07${ESC}[2J${ESC}[31mred${ESC}[0m\x08 after` }] } });
    const event = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: `echo ${ESC}[1Ahidden` } }] } });
    const podKey = await finishedPod('shell', `cat <<'EOF'\n${hostile}\n${event}\nEOF`);
    const shown = await cli(['pods', 'logs', podKey, '--format', 'claude-code']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe('before red after\n$ echo hidden\n');
    const followed = await cli(['pods', 'logs', podKey, '-f', '--format', 'claude-code']);
    expect(followed.stdout).toBe(shown.stdout);

    const bad = await cli(['pods', 'logs', podKey, '--format', 'markdown']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be one of claude-code, codex, gemini-cli, opencode, plain');
    const both = await cli(['pods', 'logs', podKey, '--pretty', '--raw']);
    expect(both.code).toBe(2);
  }, 120_000);
});
