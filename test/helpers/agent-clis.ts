/**
 * The published agent CLIs for the tests that run them (test/agents-real/): installed from npm,
 * once per machine and set of versions, into a cache directory outside the project's dependencies
 * (`${XDG_CACHE_HOME:-~/.cache}/drover-test-agent-clis/<versions>/`, or
 * `$DROVER_TEST_AGENT_CLIS_CACHE/<versions>/`), and reused by every later run. `npm run
 * test:agent-clis` installs them ahead of time; the tests install them when missing.
 *
 * npm 11 skips the packages' install scripts unless allowed; they are skipped here in any case
 * (`--ignore-scripts`): Claude Code's and OpenCode's scripts only copy the native binary that each
 * package's per-platform optional dependency already holds, and `bin/` links the programs to those
 * binaries directly, so the CLIs run either way.
 *
 * Also here: the agent configuration an operator keeps in the runner's agent-home template
 * (`writeAgentHome`), pointed at the model stand-ins of test/helpers/model-mocks/.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The pinned versions: the one place to move them. */
export const AGENT_CLIS = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.330', program: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.169.0', program: 'codex' },
  'gemini-cli': { pkg: '@google/gemini-cli', version: '0.61.0', program: 'gemini' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', program: 'opencode' },
} as const;

export type RealAgentSlug = keyof typeof AGENT_CLIS;
export const REAL_AGENT_SLUGS = Object.keys(AGENT_CLIS) as RealAgentSlug[];

export interface AgentClis {
  /** The install directory (node_modules/ and bin/). */
  dir: string;
  /** A directory holding exactly `claude`, `codex`, `gemini` and `opencode` (links into node_modules/). */
  binDir: string;
  /** Each program's executable, links resolved (a native binary, or a Node script for codex and gemini). */
  executables: Record<RealAgentSlug, string>;
}

const INSTALL_TIMEOUT_MS = 15 * 60_000;
const platformPackage = `${process.platform}-${process.arch}`;

function cacheRoot(): string {
  if (process.env.DROVER_TEST_AGENT_CLIS_CACHE) return path.resolve(process.env.DROVER_TEST_AGENT_CLIS_CACHE);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'drover-test-agent-clis');
}

export function agentClisDir(): string {
  const key = REAL_AGENT_SLUGS.map((slug) => `${slug}-${AGENT_CLIS[slug].version}`).join('+');
  return path.join(cacheRoot(), key);
}

/**
 * Where each program really is. Claude Code and OpenCode publish a launcher whose install script
 * would put the native binary in place; the per-platform package holds that binary already.
 */
function programTargets(dir: string): Record<RealAgentSlug, string> {
  const modules = path.join(dir, 'node_modules');
  const first = (...candidates: string[]) => candidates.find((file) => fs.existsSync(file)) ?? candidates[candidates.length - 1];
  return {
    'claude-code': first(path.join(modules, '@anthropic-ai', `claude-code-${platformPackage}`, 'claude'), path.join(modules, '.bin', 'claude')),
    codex: path.join(modules, '.bin', 'codex'),
    'gemini-cli': path.join(modules, '.bin', 'gemini'),
    opencode: first(path.join(modules, `opencode-${platformPackage}`, 'bin', 'opencode'), path.join(modules, '.bin', 'opencode')),
  };
}

/** `--version` of each program, checked against the pinned version. */
function verify(binDir: string): void {
  for (const slug of REAL_AGENT_SLUGS) {
    const { program, version } = AGENT_CLIS[slug];
    const run = spawnSync(path.join(binDir, program), ['--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: `${binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: os.tmpdir(), LANG: 'C.UTF-8' },
    });
    const said = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    if (run.status !== 0 || !said.includes(version)) {
      throw new Error(`${program} --version answered ${JSON.stringify(said.trim().slice(0, 300))} (exit ${run.status}), expected ${version}`);
    }
  }
}

function install(staging: string): void {
  fs.mkdirSync(staging, { recursive: true });
  const dependencies = Object.fromEntries(REAL_AGENT_SLUGS.map((slug) => [AGENT_CLIS[slug].pkg, AGENT_CLIS[slug].version]));
  fs.writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ name: 'drover-test-agent-clis', private: true, dependencies }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
    cwd: staging,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
  });
  const binDir = path.join(staging, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const targets = programTargets(staging);
  for (const slug of REAL_AGENT_SLUGS) {
    // Relative links: the staging directory is renamed into place afterwards.
    fs.symlinkSync(path.relative(binDir, targets[slug]), path.join(binDir, AGENT_CLIS[slug].program));
  }
  verify(binDir);
  fs.writeFileSync(path.join(staging, 'ready.json'), JSON.stringify({ versions: dependencies, installed_at: new Date().toISOString() }, null, 2));
}

function describe(dir: string): AgentClis {
  const binDir = path.join(dir, 'bin');
  const targets = programTargets(dir);
  const executables = Object.fromEntries(REAL_AGENT_SLUGS.map((slug) => [slug, fs.realpathSync(targets[slug])])) as Record<RealAgentSlug, string>;
  return { dir, binDir, executables };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The CLIs, installed first if they are not yet in the cache. Test files running at the same time
 * take turns through a lock directory; one that finds the lock waits for the other's install.
 */
export async function ensureAgentClis(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<AgentClis> {
  const dir = agentClisDir();
  const ready = () => fs.existsSync(path.join(dir, 'ready.json'));
  if (ready()) return describe(dir);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (ready()) return describe(dir);
      // A lock older than an install can take was left by a killed run.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > INSTALL_TIMEOUT_MS + 60_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for another install of the agent CLIs (lock ${lock})`, { cause: error });
      await sleep(1000);
    }
  }
  try {
    if (ready()) return describe(dir);
    const staging = `${dir}.staging-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    log(`installing the agent CLIs for the tests into ${dir} (once per machine)…`);
    const started = Date.now();
    try {
      install(staging);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
    log(`installed the agent CLIs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return describe(dir);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Names of the variables the agent-home configuration reads keys from (given to agents only as CREDENTIALs). */
export const MOCK_KEY_VARIABLES = {
  'claude-code': 'ANTHROPIC_API_KEY',
  codex: 'OPENAI_API_KEY',
  'gemini-cli': 'GEMINI_API_KEY',
  opencode: 'OPENAI_API_KEY',
} as const satisfies Record<RealAgentSlug, string>;

/** The model each CLI is told to use (the stand-in answers any). */
export const MOCK_MODELS = { 'claude-code': 'claude-sonnet-4-5', codex: 'mock-model', 'gemini-cli': 'gemini-2.5-flash', opencode: 'mock/mock-model' } as const;

/**
 * Writes the agents' own configuration into `dir`, as an operator keeps it in the runner's
 * agent-home template (docs/runners.md: `<work dir>/agent-home/`, copied into each pod's HOME). Codex
 * and OpenCode find their model endpoint
 * here; Claude Code and Gemini CLI get theirs from `ENV` (test/agents-real/harness.ts). No key is written
 * anywhere: each file names the variable its key comes from.
 *
 * With `relay` (a runner's pods, whose model calls go through its relay), Gemini CLI's settings are
 * left out: the runner writes what the relay needs (docs/agents.md "Each CLI's own configuration"),
 * and replaces the endpoints of Codex's and OpenCode's providers here with the relay's.
 */
export function writeAgentHome(dir: string, mockUrl: string, options: { relay?: boolean } = {}): void {
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };
  write(
    '.codex/config.toml',
    [
      `model = "${MOCK_MODELS.codex}"`,
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.mock]',
      'name = "Model stand-in"',
      `base_url = "${mockUrl}/v1"`,
      `env_key = "${MOCK_KEY_VARIABLES.codex}"`,
      'wire_api = "responses"',
      'supports_websockets = false',
      '',
    ].join('\n'),
  );
  if (!options.relay) write('.gemini/settings.json', JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }, null, 2));
  write(
    '.config/opencode/opencode.json',
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        provider: {
          mock: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Model stand-in',
            options: { baseURL: `${mockUrl}/v1`, apiKey: `{env:${MOCK_KEY_VARIABLES.opencode}}` },
            // Prices per million tokens, so OpenCode reports a cost.
            models: { 'mock-model': { name: 'Mock model', cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } } },
          },
        },
        model: MOCK_MODELS.opencode,
        small_model: MOCK_MODELS.opencode,
        autoupdate: false,
        share: 'disabled',
      },
      null,
      2,
    ),
  );
  write('.claude/settings.json', JSON.stringify({ env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }, null, 2));
}
