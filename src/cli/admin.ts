import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { networkCause } from '../client/network.ts';

type Flags = Record<string, string | undefined>;

interface AdminCommand {
  summary: string;
  required: string[];
  optional?: string[];
  method: 'GET' | 'POST' | 'DELETE';
  path(flags: Flags): string;
  body?(flags: Flags, env: NodeJS.ProcessEnv): Record<string, unknown>;
}

const org = (f: Flags) => encodeURIComponent(f.org!);
const list = (value: string | undefined) => (value ? value.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

/** `--token` as given, or the value of the environment variable named by `--token-env`. */
function repositoryToken(f: Flags, env: NodeJS.ProcessEnv): string | undefined {
  if (f.token !== undefined && f['token-env'] !== undefined) throw new Error('give --token or --token-env, not both');
  if (f['token-env'] === undefined) return f.token;
  const value = env[f['token-env']];
  if (!value) throw new Error(`--token-env: the environment variable ${f['token-env']} is not set`);
  return value;
}

/** `drover admin <resource> <action>`: thin wrappers over the admin endpoints of contract §2. */
export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  'orgs create': {
    summary: 'create an organization',
    required: ['slug', 'name'],
    optional: ['ticket-prefix'],
    method: 'POST',
    path: () => '/orgs',
    body: (f) => ({ slug: f.slug, name: f.name, ticket_prefix: f['ticket-prefix'] }),
  },
  'orgs list': { summary: 'list organizations', required: [], method: 'GET', path: () => '/orgs' },
  'api-keys create': {
    summary: 'issue an API key (printed once)',
    required: ['org', 'name', 'scopes'],
    optional: ['expires-at'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/api-keys`,
    body: (f) => ({ name: f.name, scopes: list(f.scopes), expires_at: f['expires-at'] }),
  },
  'api-keys list': { summary: 'list API keys', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/api-keys` },
  'api-keys revoke': {
    summary: 'revoke an API key',
    required: ['org', 'id'],
    method: 'DELETE',
    path: (f) => `/orgs/${org(f)}/api-keys/${encodeURIComponent(f.id!)}`,
  },
  'users create': {
    summary: 'create a user',
    required: ['org', 'name', 'email'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/users`,
    body: (f) => ({ name: f.name, email: f.email }),
  },
  'users list': { summary: 'list users', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/users` },
  'repositories create': {
    summary: 'register a repository (provider: github, gitlab, gitea or git); --token-env NAME reads the token from $NAME, keeping it out of argv',
    required: ['org', 'name', 'full-name', 'provider', 'url'],
    optional: ['default-branch', 'ticket-prefix', 'api-base-url', 'token', 'token-env'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/repositories`,
    body: (f, env) => ({
      name: f.name,
      full_name: f['full-name'],
      provider: f.provider,
      url: f.url,
      default_branch: f['default-branch'],
      ticket_prefix: f['ticket-prefix'],
      api_base_url: f['api-base-url'],
      token: repositoryToken(f, env),
    }),
  },
  'repositories list': { summary: 'list repositories', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/repositories` },
  'runner-tokens create': {
    summary: 'issue a registration token for `drover runner --token`',
    required: ['org'],
    optional: ['labels', 'expires-in-hours'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/runner-tokens`,
    body: (f) => ({
      labels: list(f.labels),
      expires_in_hours: f['expires-in-hours'] === undefined ? undefined : Number(f['expires-in-hours']),
    }),
  },
  'agents create': {
    summary: 'create a custom agent (prompt position: last, first, stdin or env)',
    required: ['org', 'slug', 'name', 'command'],
    optional: ['args', 'prompt-position'],
    method: 'POST',
    path: (f) => `/orgs/${org(f)}/agents`,
    body: (f) => ({ slug: f.slug, name: f.name, command: f.command, args: list(f.args), prompt_position: f['prompt-position'] }),
  },
  'agents list': { summary: 'list custom agents', required: ['org'], method: 'GET', path: (f) => `/orgs/${org(f)}/agents` },
};

const COMMON_FLAGS = [
  'Common flags: --server <url> (default $DROVER_SERVER_URL or http://127.0.0.1:7070),',
  '              --admin-token <token> (default $DROVER_ADMIN_TOKEN or <data dir>/admin-token), --data-dir <dir>',
];

function commandUsage(name: string, c: AdminCommand): string {
  const flags = [...c.required.map((f) => `--${f} <${f}>`), ...(c.optional ?? []).map((f) => `[--${f} <${f}>]`)].join(' ');
  return `  drover admin ${name} ${flags}\n      ${c.summary}`;
}

/** The usage of every admin command, or of those of one group (`orgs`), or of one command. */
export function adminUsage(only?: string): string {
  const entries = Object.entries(ADMIN_COMMANDS).filter(([name]) => only === undefined || name === only || name.startsWith(`${only} `));
  return ['Usage:', ...entries.map(([name, c]) => commandUsage(name, c)), '', ...COMMON_FLAGS].join('\n');
}

const isHelp = (word: string | undefined) => word === '--help' || word === '-h' || word === 'help';

function adminToken(flags: Flags, env: NodeJS.ProcessEnv): string {
  if (flags['admin-token']) return flags['admin-token'];
  if (env.DROVER_ADMIN_TOKEN) return env.DROVER_ADMIN_TOKEN;
  const file = path.join(path.resolve(flags['data-dir'] ?? env.DROVER_DATA_DIR ?? './.drover'), 'admin-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  throw new Error(`no admin token: pass --admin-token, set DROVER_ADMIN_TOKEN, or run where ${file} exists`);
}

/** Runs one admin command; prints the JSON answer. Returns the exit code. */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env, out = process.stdout, err = process.stderr): Promise<number> {
  if (isHelp(argv[0])) {
    out.write(`${adminUsage()}\n`);
    return 0;
  }
  const name = argv.slice(0, 2).join(' ');
  const command = ADMIN_COMMANDS[name];
  const isGroup = Object.keys(ADMIN_COMMANDS).some((n) => n.startsWith(`${argv[0]} `));
  if (isGroup && isHelp(argv[1])) {
    out.write(`${adminUsage(argv[0])}\n`);
    return 0;
  }
  if (command && argv.slice(2).some(isHelp)) {
    out.write(`${adminUsage(name)}\n`);
    return 0;
  }
  if (!command) {
    err.write(`${argv.length ? `unknown admin command "${name}"\n\n` : ''}${adminUsage()}\n`);
    return 2;
  }
  const names = ['server', 'admin-token', 'data-dir', ...command.required, ...(command.optional ?? [])];
  let flags: Flags;
  try {
    flags = parseArgs({ args: argv.slice(2), options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])) }).values as Flags;
  } catch (error) {
    err.write(`${(error as Error).message}\n\n${adminUsage()}\n`);
    return 2;
  }
  const missing = command.required.filter((f) => !flags[f]);
  if (missing.length) {
    err.write(`missing ${missing.map((f) => `--${f}`).join(', ')}\n\n${adminUsage()}\n`);
    return 2;
  }
  const server = (flags.server ?? env.DROVER_SERVER_URL ?? 'http://127.0.0.1:7070').replace(/\/+$/, '');
  let body: string | undefined;
  let token: string;
  try {
    body = command.body ? JSON.stringify(command.body(flags, env)) : undefined;
    token = adminToken(flags, env);
  } catch (error) {
    err.write(`drover admin: ${(error as Error).message}\n`);
    return 1;
  }
  const url = `${server}/api/v1/admin${command.path(flags)}`;
  try {
    const response = await fetch(url, {
      method: command.method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    (response.ok ? out : err).write(formatJson(text) + '\n');
    return response.ok ? 0 : 1;
  } catch (error) {
    // No answer: exit 3 naming the URL and the cause, as the client commands do.
    err.write(`drover admin: cannot reach the server at ${url.split('?')[0]}: ${networkCause(error)}\n`);
    return 3;
  }
}

function formatJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
