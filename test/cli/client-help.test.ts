/**
 * The command line client's surface, in-process (no server needed): every command of docs/cli.md
 * exists and answers --help, usage errors exit 2, the top-level help names every command, option
 * and environment variable there is, and docs/cli.md shows every command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_WORDS, COMMANDS, runClient } from '../../src/cli/client/main.ts';
import { TOP_USAGE } from '../../src/cli/usage.ts';
import { REPO_ROOT } from '../helpers/server-process.ts';

/** The commands docs/cli.md lists, word for word. */
const CONTRACT = {
  tickets: 'list|get|create|update|status|delete|board',
  pods: 'list|get|run|logs|terminate',
  loops: 'list|get|create|update|delete|enable|disable|trigger|runs|run|cancel',
  channels: 'list|get|create|update|messages|post|tail',
  runners: 'list|get|pods',
  repos: 'list|get|branches|mrs',
  users: 'list',
  presets: 'list',
};

async function run(argv: string[], env: NodeJS.ProcessEnv = { HOME: '/nonexistent-home' }) {
  let stdout = '';
  let stderr = '';
  const code = await runClient(argv, {
    out: { write: (t: string) => (stdout += t) },
    err: { write: (t: string) => (stderr += t) },
    env,
    stdin: process.stdin,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}

describe('drover client commands: the surface', () => {
  it('has exactly the commands docs/cli.md lists, plus login, events, whoami and activity', () => {
    const expected = Object.entries(CONTRACT).flatMap(([group, list]) => list.split('|').map((c) => `${group} ${c}`));
    expect(COMMANDS.map((c) => c.name).sort()).toEqual([...expected, 'login', 'events', 'whoami', 'activity'].sort());
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))('drover %s --help: usage, every option, an example; exit 0', async (name, command) => {
    for (const flag of ['--help', '-h']) {
      const result = await run([...name.split(' '), flag]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout.startsWith(`Usage: drover ${name}`)).toBe(true);
      for (const option of [...Object.keys(command.options ?? {}), 'json', 'profile', 'help']) expect(result.stdout).toContain(`--${option}`);
      expect(result.stdout).toMatch(new RegExp(`Examples:\\n  drover ${name}`));
    }
  });

  it.each(Object.keys(CONTRACT))('drover %s --help lists its commands; alone it is a usage error', async (group) => {
    const help = await run([group, '--help']);
    expect(help.code).toBe(0);
    for (const sub of CONTRACT[group as keyof typeof CONTRACT].split('|')) expect(help.stdout).toContain(`${group} ${sub} `);
    const alone = await run([group]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(`Usage: drover ${group} <command>`);
  });

  it('usage errors exit 2 and say what is wrong: unknown command, unknown option, missing or extra argument, bad number, bad enum', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['tickets', 'frobnicate'], /unknown command 'tickets frobnicate'/],
      [['tickets', 'list', '--bogus'], /Unknown option '--bogus'/],
      [['tickets', 'get'], /missing SLUG/],
      [['tickets', 'get', 'A-1', 'B-2'], /unexpected argument "B-2"/],
      [['tickets', 'list', '--limit', 'ten'], /--limit must be an integer/],
      [['tickets', 'list', '--status', 'open'], /--status must be one of backlog, todo/],
      [['tickets', 'status', 'A-1', 'open'], /STATUS must be one of/],
      [['tickets', 'create', '--title', 'x'], /--type and --title are required/],
      [['loops', 'run', 'nightly', 'x'], /RUN \(the run number.*\) must be an integer/],
      [['loops', 'trigger', 'nightly', '--var', 'novalue'], /--var takes NAME=VALUE/],
      [['pods', 'run', '--prompt', 'x'], /--agent or --preset is required/],
      [['channels', 'update', '1', '--archive', '--unarchive'], /not both/],
      [['login', '--server', 'http://x'], /--server, --org and --api-key are required/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, { HOME: '/nonexistent-home', DROVER_API_URL: 'http://127.0.0.1:9', DROVER_ORG: 'o', DROVER_API_KEY: 'k' });
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout, argv.join(' ')).toBe('');
      expect(result.stderr, argv.join(' ')).toMatch(message);
    }
  });

  it('without a profile or environment, a command says how to log in (exit 2)', async () => {
    const result = await run(['tickets', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no server \(DROVER_API_URL\), organization \(DROVER_ORG\), API key \(DROVER_API_KEY\) configured: run "drover login/);
  });

  it('the top-level help names every command, the options of serve and runner, and every environment variable the sources read', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${TOP_USAGE}\n`);
    for (const group of Object.keys(CONTRACT)) expect(TOP_USAGE).toContain(`drover ${group.padEnd(8)} ${CONTRACT[group as keyof typeof CONTRACT]}`);
    for (const word of ['serve', 'runner', 'admin', 'login', 'events', 'version']) expect(TOP_USAGE).toContain(`drover ${word}`);

    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (/\.(ts|mjs)$/.test(entry.name) && entry.name !== 'schema.ts') sources.push(fs.readFileSync(full, 'utf8'));
      }
    };
    walk(path.join(REPO_ROOT, 'src'));
    sources.push(fs.readFileSync(path.join(REPO_ROOT, 'bin', 'drover.mjs'), 'utf8'));
    const names = new Set(sources.flatMap((text) => text.match(/\bDROVER_[A-Z0-9_]+/g) ?? []));
    names.delete('DROVER_BIN'); // a constant's name in src/serve/local-runner.ts, not a variable
    expect(names.size).toBeGreaterThan(30);
    for (const name of names) expect(TOP_USAGE, name).toContain(name.endsWith('_') ? name : `${name}`);
    for (const name of ['DATABASE_URL', 'XDG_CONFIG_HOME']) expect(TOP_USAGE).toContain(name);

    const main = fs.readFileSync(path.join(REPO_ROOT, 'src', 'main.ts'), 'utf8');
    const options = [...main.matchAll(/'([a-z][a-z-]+)': \{ type:|\b([a-z]+): \{ type: 'string'/g)].map((m) => m[1] ?? m[2]);
    const runnerNames = /const names = \[([^\]]+)\]/.exec(main)![1].match(/'[a-z-]+'/g)!.map((s) => s.slice(1, -1));
    for (const option of [...options, ...runnerNames]) expect(TOP_USAGE, option).toContain(`--${option}`);
  });

  it('bin/drover.mjs sends exactly the client commands, the help and the version to the client bundle', () => {
    const bin = fs.readFileSync(path.join(REPO_ROOT, 'bin', 'drover.mjs'), 'utf8');
    const listed = /const CLIENT = new Set\(\[([^\]]+)\]\)/.exec(bin)![1].match(/'[^']+'/g)!.map((s) => s.slice(1, -1));
    expect(listed.sort()).toEqual([...CLIENT_WORDS, 'help', '--help', '-h', 'version', '--version'].sort());
  });

  it('docs/cli.md shows every command with an example', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    for (const command of COMMANDS) expect(doc, command.name).toMatch(new RegExp(`^drover ${command.name}\\b`, 'm'));
  });
});
