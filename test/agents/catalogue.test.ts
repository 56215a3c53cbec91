/**
 * The runner-side agent layer (docs/agents.md "The built-in agents", "Autopilot";
 * docs/runners.md "Environment"; custom agents: docs/api.md "Administration"): the exact command line of every built-in agent, custom agents' prompt
 * positions, session ids in recorded-shape output, the minimal environment, PATH detection — and
 * real spawns of stand-in executables that prove each program receives exactly the argv, stdin and
 * environment built here.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentInvocationError,
  BUILTIN_AGENT_SLUGS,
  agentEnvironment,
  agentProgram,
  buildInvocation,
  builtinAgent,
  detectAgents,
  envNameProblem,
  findExecutable,
  isBuiltinAgentSlug,
  parseAgentOutput,
  pathDirectories,
  permissionModeProblem,
  supportsResume,
  type AgentInvocation,
  type AgentTask,
  type BuiltinAgentSlug,
  type CustomAgentDefinition,
} from '../../src/agents/index.ts';

const STAND_IN = fileURLToPath(new URL('../fixtures/stand-in-agent.mjs', import.meta.url));
const WS = '/srv/drover/work/p-abc';
const PROMPT = 'Fix the failing test';
const SESSION = '3f1c2b9e-5d7a-4c1e-9b8f-2a6d4e0c7b11';

const task = (extra: Partial<AgentTask> = {}): AgentTask => ({ prompt: PROMPT, workspace: WS, ...extra });
const argvOf = (slug: BuiltinAgentSlug, extra: Partial<AgentTask> = {}) => buildInvocation({ builtin: slug }, task(extra));

describe('built-in agent registry', () => {
  it('has the six agents of the contract with their programs', () => {
    expect([...BUILTIN_AGENT_SLUGS]).toEqual(['claude-code', 'codex', 'gemini-cli', 'aider', 'opencode', 'shell']);
    expect(BUILTIN_AGENT_SLUGS.map((slug) => agentProgram(slug))).toEqual(['claude', 'codex', 'gemini', 'aider', 'opencode', 'bash']);
    for (const slug of BUILTIN_AGENT_SLUGS) {
      const agent = builtinAgent(slug);
      expect(agent?.slug).toBe(slug);
      expect(agent?.source.length).toBeGreaterThan(0);
      expect(isBuiltinAgentSlug(slug)).toBe(true);
    }
  });

  it('knows which agents can resume a session', () => {
    expect(BUILTIN_AGENT_SLUGS.filter((slug) => supportsResume(slug))).toEqual(['claude-code', 'codex', 'gemini-cli', 'opencode']);
  });

  it('answers null / false for custom or unknown slugs', () => {
    expect(builtinAgent('my-agent')).toBeNull();
    expect(agentProgram('my-agent')).toBeNull();
    expect(supportsResume('my-agent')).toBe(false);
    expect(isBuiltinAgentSlug('toString')).toBe(false);
    expect(builtinAgent('constructor')).toBeNull();
  });
});

describe('buildInvocation: built-in agents', () => {
  it('claude-code: print mode, stream-json, unattended permission mode, prompt after --', () => {
    expect(argvOf('claude-code')).toEqual({
      command: 'claude',
      args: ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--', PROMPT],
      stdin: null,
    });
    expect(argvOf('claude-code', { model: 'sonnet', maxTurns: 30, permissionMode: 'acceptEdits', resumeSessionId: SESSION })).toEqual({
      command: 'claude',
      args: [
        '-p', '--output-format', 'stream-json', '--verbose',
        '--model', 'sonnet',
        '--max-turns', '30',
        '--permission-mode', 'acceptEdits',
        '--resume', SESSION,
        '--', PROMPT,
      ],
      stdin: null,
    });
    expect(argvOf('claude-code', { maxTurns: 5 }).args).toEqual([
      '-p', '--output-format', 'stream-json', '--verbose', '--max-turns', '5', '--permission-mode', 'bypassPermissions', '--', PROMPT,
    ]);
  });

  it('codex: exec with a workspace-write sandbox that may reach the network, resume as a subcommand', () => {
    const base = [
      'exec', '--json', '--sandbox', 'workspace-write', '-c', 'sandbox_workspace_write.network_access=true',
      '-c', 'shell_environment_policy.ignore_default_excludes=true', '--skip-git-repo-check',
    ];
    expect(argvOf('codex')).toEqual({ command: 'codex', args: [...base, '--', PROMPT], stdin: null });
    expect(argvOf('codex', { model: 'gpt-5-codex', maxTurns: 30, resumeSessionId: SESSION })).toEqual({
      command: 'codex',
      args: [...base, '--model', 'gpt-5-codex', 'resume', SESSION, '--', PROMPT],
      stdin: null,
    });
    expect(argvOf('codex', { permissionMode: 'danger-full-access' }).args).toEqual([
      'exec', '--json', '--sandbox', 'danger-full-access', '-c', 'shell_environment_policy.ignore_default_excludes=true',
      '--skip-git-repo-check', '--', PROMPT,
    ]);
    expect(argvOf('codex', { permissionMode: 'read-only', model: 'o3' }).args).toEqual([
      'exec', '--json', '--sandbox', 'read-only', '-c', 'shell_environment_policy.ignore_default_excludes=true',
      '--skip-git-repo-check', '--model', 'o3', '--', PROMPT,
    ]);
  });

  it('gemini-cli: headless stream-json, yolo approvals, trusted workspace, --prompt=', () => {
    expect(argvOf('gemini-cli')).toEqual({
      command: 'gemini',
      args: ['--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust', `--prompt=${PROMPT}`],
      stdin: null,
    });
    expect(argvOf('gemini-cli', { model: 'gemini-2.5-pro', maxTurns: 9, permissionMode: 'auto_edit', resumeSessionId: SESSION })).toEqual({
      command: 'gemini',
      args: [
        '--output-format', 'stream-json', '--approval-mode', 'auto_edit', '--skip-trust',
        '--model', 'gemini-2.5-pro', '--resume', SESSION, `--prompt=${PROMPT}`,
      ],
      stdin: null,
    });
  });

  it('aider: one message, yes to everything that matters, no to side questions; no resume, turns or modes', () => {
    const base = [
      '--yes-always', '--no-pretty', '--no-check-update', '--no-show-release-notes', '--no-analytics',
      '--no-show-model-warnings', '--no-detect-urls',
    ];
    expect(argvOf('aider')).toEqual({ command: 'aider', args: [...base, `--message=${PROMPT}`], stdin: null });
    expect(argvOf('aider', { model: 'sonnet', maxTurns: 3, permissionMode: 'bypassPermissions', resumeSessionId: SESSION })).toEqual({
      command: 'aider',
      args: [...base, '--model', 'sonnet', `--message=${PROMPT}`],
      stdin: null,
    });
  });

  it('opencode: run with JSON events and auto-approval, the prompt on stdin', () => {
    expect(argvOf('opencode')).toEqual({ command: 'opencode', args: ['run', '--format', 'json', '--auto'], stdin: PROMPT });
    expect(argvOf('opencode', { model: 'anthropic/claude-sonnet-4-5', maxTurns: 2, resumeSessionId: 'ses_494719016ffe85dkDMj0FPRbHK' })).toEqual({
      command: 'opencode',
      args: ['run', '--format', 'json', '--auto', '--model', 'anthropic/claude-sonnet-4-5', '--session', 'ses_494719016ffe85dkDMj0FPRbHK'],
      stdin: PROMPT,
    });
    expect(argvOf('opencode', { permissionMode: 'default' }).args).toEqual(['run', '--format', 'json']);
  });

  it('shell: bash -c -- <script>; every other task field is ignored', () => {
    const script = 'set -e\nnpm test\n';
    expect(buildInvocation('shell', task({ prompt: script }))).toEqual({ command: 'bash', args: ['-c', '--', script], stdin: null });
    expect(buildInvocation('shell', task({ prompt: script, model: 'x', maxTurns: 1, permissionMode: 'plan', resumeSessionId: SESSION }))).toEqual({
      command: 'bash',
      args: ['-c', '--', script],
      stdin: null,
    });
  });

  it('keeps prompts that look like options, subcommands or shell syntax verbatim and in one argument', () => {
    const tricky = '--help\n- item "quoted" $HOME `id` \'x\' && rm -rf /';
    expect(argvOf('claude-code', { prompt: tricky }).args.slice(-2)).toEqual(['--', tricky]);
    expect(argvOf('codex', { prompt: 'review' }).args.slice(-2)).toEqual(['--', 'review']);
    expect(argvOf('gemini-cli', { prompt: tricky }).args.at(-1)).toBe(`--prompt=${tricky}`);
    expect(argvOf('aider', { prompt: tricky }).args.at(-1)).toBe(`--message=${tricky}`);
    expect(argvOf('opencode', { prompt: tricky }).stdin).toBe(tricky);
  });

  it('rejects what would break or subvert the command line', () => {
    const error = (fn: () => unknown) => {
      try {
        fn();
      } catch (caught) {
        return caught;
      }
      return null;
    };
    const cases: [() => unknown, string][] = [
      [() => buildInvocation({ builtin: 'cursor' as BuiltinAgentSlug }, task()), 'agent'],
      [() => argvOf('claude-code', { model: '--dangerously-skip-permissions' }), 'model'],
      [() => argvOf('claude-code', { model: 'has space' }), 'model'],
      [() => argvOf('claude-code', { maxTurns: 0 }), 'maxTurns'],
      [() => argvOf('claude-code', { maxTurns: 2.5 }), 'maxTurns'],
      [() => argvOf('claude-code', { permissionMode: '-x' }), 'permissionMode'],
      [() => argvOf('codex', { resumeSessionId: '--last' }), 'resumeSessionId'],
      [() => argvOf('codex', { resumeSessionId: 'a b' }), 'resumeSessionId'],
      [() => argvOf('claude-code', { prompt: 'a\0b' }), 'prompt'],
      [() => argvOf('opencode', { model: 'claude-sonnet' }), 'model'],
      [() => argvOf('opencode', { permissionMode: 'yolo' }), 'permissionMode'],
    ];
    for (const [fn, field] of cases) {
      const caught = error(fn);
      expect(caught, field).toBeInstanceOf(AgentInvocationError);
      expect((caught as AgentInvocationError).field).toBe(field);
    }
    // A resume id is only checked where it is used; null/empty means "no session".
    expect(argvOf('claude-code', { resumeSessionId: null }).args).not.toContain('--resume');
    expect(argvOf('claude-code', { resumeSessionId: '' }).args).not.toContain('--resume');
  });
});

describe('buildInvocation: custom agents', () => {
  const custom = (position: CustomAgentDefinition['prompt_position']): CustomAgentDefinition => ({
    slug: 'reviewer',
    command: 'my-agent',
    args: ['--mode', 'review'],
    prompt_position: position,
  });

  it('places the prompt per prompt_position and ignores the other task fields', () => {
    const full = task({ model: 'm', maxTurns: 3, permissionMode: 'auto', resumeSessionId: SESSION });
    expect(buildInvocation(custom('last'), full)).toEqual({ command: 'my-agent', args: ['--mode', 'review', PROMPT], stdin: null });
    expect(buildInvocation(custom('first'), full)).toEqual({ command: 'my-agent', args: [PROMPT, '--mode', 'review'], stdin: null });
    expect(buildInvocation(custom('stdin'), full)).toEqual({ command: 'my-agent', args: ['--mode', 'review'], stdin: PROMPT });
    expect(buildInvocation(custom('env'), full)).toEqual({ command: 'my-agent', args: ['--mode', 'review'], stdin: null });
  });

  it('does not share the definition args array', () => {
    const definition = custom('last');
    const invocation = buildInvocation(definition, task());
    invocation.args.push('x');
    expect(definition.args).toEqual(['--mode', 'review']);
  });

  it('rejects broken definitions', () => {
    expect(() => buildInvocation({ ...custom('last'), command: '' }, task())).toThrow(AgentInvocationError);
    expect(() => buildInvocation({ ...custom('last'), prompt_position: 'middle' as 'last' }, task())).toThrow(/prompt_position/);
    expect(() => buildInvocation({ ...custom('last'), args: ['ok', 3 as unknown as string] }, task())).toThrow(/args/);
  });
});

/** Session ids from outputs shaped like the CLIs' (full recorded outputs: test/agents/output.test.ts). */
describe('session ids in agent output', () => {
  const sessionOf = (slug: string, stdout: string) => parseAgentOutput(slug, stdout).session_id;

  it('claude-code: the session_id of the stream-json lines, the last one winning', () => {
    const output = [
      `{"type":"system","subtype":"init","cwd":"/w","session_id":"${SESSION}","tools":["Bash","Edit","Read"],"mcp_servers":[],"model":"claude-sonnet-4-5-20250929","permissionMode":"bypassPermissions","apiKeySource":"ANTHROPIC_API_KEY"}`,
      `{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"text","text":"Running the tests."}]},"parent_tool_use_id":null,"session_id":"${SESSION}"}`,
      `{"type":"result","subtype":"success","is_error":false,"duration_ms":5123,"num_turns":4,"result":"Fixed.","session_id":"${SESSION}","total_cost_usd":0.0412}`,
      '',
    ].join('\n');
    expect(sessionOf('claude-code', output)).toBe(SESSION);
    // A cut-off first line is skipped.
    expect(sessionOf('claude-code', `tools":["Bash"]}\n{"type":"result","subtype":"success","session_id":"${SESSION}"}\n`)).toBe(SESSION);
    expect(sessionOf('claude-code', `{"session_id":"old-1"}\r\n{"session_id":"new-2"}`)).toBe('new-2');
    expect(sessionOf('claude-code', 'Error: Invalid API key · Please run /login\n')).toBeNull();
  });

  it('codex: the thread id of thread.started (exec --json)', () => {
    const id = '0199a213-81c0-7800-8aa1-bbab2a035a53';
    expect(sessionOf('codex', `{"type":"thread.started","thread_id":"${id}"}\n{"type":"turn.started"}\n`)).toBe(id);
    expect(sessionOf('codex', 'Not inside a trusted directory and --skip-git-repo-check was not specified.\n')).toBeNull();
    // The model's answer cannot plant another id: only thread.started names one.
    const planted = `{"type":"thread.started","thread_id":"${id}"}\n{"type":"item.completed","item":{"type":"agent_message","text":"{\\"thread_id\\":\\"x\\"}"}}\n{"session_id":"11111111-2222-4333-8444-555555555555"}\n`;
    expect(sessionOf('codex', planted)).toBe(id);
  });

  it('gemini-cli: the init event', () => {
    const id = 'c0ffee00-1234-4abc-8def-0123456789ab';
    const output = [
      'YOLO mode is enabled. All tool calls will be automatically approved.',
      `{"type":"init","timestamp":"2025-11-02T10:00:00.000Z","session_id":"${id}","model":"gemini-2.5-pro"}`,
      '{"type":"message","timestamp":"2025-11-02T10:00:01.000Z","role":"user","content":"Fix the failing test"}',
      '{"type":"tool_use","timestamp":"2025-11-02T10:00:02.000Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"npm test"}}',
      '{"type":"result","timestamp":"2025-11-02T10:00:09.000Z","status":"success","stats":{"total_tokens":1234}}',
    ].join('\n');
    expect(sessionOf('gemini-cli', output)).toBe(id);
  });

  it('opencode: the sessionID of the JSON events', () => {
    const id = 'ses_494719016ffe85dkDMj0FPRbHK';
    const output = [
      `{"type":"step_start","timestamp":1767036059338,"sessionID":"${id}","part":{"id":"prt_b6b8e1","sessionID":"${id}","messageID":"msg_1","type":"step-start","snapshot":"46358aa"}}`,
      `{"type":"text","timestamp":1767036061000,"sessionID":"${id}","part":{"type":"text","text":"Fixed.","time":{"start":1,"end":2}}}`,
      `{"type":"step_finish","timestamp":1767036061100,"sessionID":"${id}","part":{"type":"step-finish","reason":"stop","cost":0}}`,
    ].join('\n');
    expect(sessionOf('opencode', output)).toBe(id);
    expect(sessionOf('opencode', `{"type":"text","part":{"sessionID":"${id}"}}`)).toBe(id);
  });

  it('aider, shell and custom agents have no resumable session', () => {
    expect(sessionOf('aider', `Aider v0.86.1\n{"session_id":"${SESSION}"}`)).toBeNull();
    expect(sessionOf('shell', `{"session_id":"${SESSION}"}`)).toBeNull();
    expect(sessionOf('reviewer', `{"session_id":"${SESSION}"}`)).toBeNull();
  });

  it('never returns an id that could be misread as an option', () => {
    expect(sessionOf('claude-code', '{"session_id":"--resume"}')).toBeNull();
    expect(sessionOf('codex', '{"type":"thread.started","thread_id":"--last"}')).toBeNull();
    expect(sessionOf('gemini-cli', '{"type":"init","session_id":"a b"}')).toBeNull();
  });
});

const DROVER = {
  apiUrl: 'http://10.0.0.5:7070',
  org: 'acme',
  podKey: 'p-abc123',
  podToken: 'drv_podtoken0000000000000000000000000',
  workspace: WS,
};

describe('agentEnvironment', () => {
  const runnerEnv = {
    PATH: '/opt/agents/bin:/usr/bin:/bin',
    HOME: '/home/runner',
    LANG: 'en_US.UTF-8',
    TERM: 'xterm-256color',
    SECRET_FROM_RUNNER: 'must-not-leak',
    ANTHROPIC_API_KEY: 'from-the-runner-process-env',
    OPENAI_API_KEY: 'only-in-the-runner-process-env',
    DROVER_ADMIN_TOKEN: 'runner-admin-token',
    NODE_OPTIONS: '--require /tmp/evil.js',
  };

  it('is exactly the DROVER_* variables, the four inherited ones and the named credentials', () => {
    const { env, missingCredentials } = agentEnvironment({
      runnerEnv,
      drover: { ...DROVER, channelId: 7, ticketSlug: 'ACME-12' },
      credentials: ['ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'OPENAI_API_KEY'],
      credentialValues: { ANTHROPIC_API_KEY: 'configured-anthropic', GITHUB_TOKEN: 'configured-github', UNUSED_KEY: 'x' },
    });
    expect(Object.keys(env).sort()).toEqual([
      'ANTHROPIC_API_KEY', 'DROVER_API_URL', 'DROVER_CHANNEL_ID', 'DROVER_ORG', 'DROVER_POD_KEY', 'DROVER_POD_TOKEN',
      'DROVER_TICKET_SLUG', 'DROVER_WORKSPACE', 'GITHUB_TOKEN', 'HOME', 'LANG', 'PATH', 'TERM',
    ]);
    expect(env).toEqual({
      PATH: '/opt/agents/bin:/usr/bin:/bin',
      HOME: '/home/runner',
      LANG: 'en_US.UTF-8',
      TERM: 'xterm-256color',
      ANTHROPIC_API_KEY: 'configured-anthropic',
      GITHUB_TOKEN: 'configured-github',
      DROVER_API_URL: 'http://10.0.0.5:7070',
      DROVER_ORG: 'acme',
      DROVER_POD_KEY: 'p-abc123',
      DROVER_POD_TOKEN: 'drv_podtoken0000000000000000000000000',
      DROVER_WORKSPACE: WS,
      DROVER_CHANNEL_ID: '7',
      DROVER_TICKET_SLUG: 'ACME-12',
    });
    // Credentials come from the runner's configuration, never from its process environment.
    expect(missingCredentials).toEqual(['OPENAI_API_KEY']);
    expect(Object.values(env)).not.toContain('must-not-leak');
    expect(Object.values(env)).not.toContain('from-the-runner-process-env');
    expect(env).not.toHaveProperty('SECRET_FROM_RUNNER');
    expect(env).not.toHaveProperty('NODE_OPTIONS');
    expect(env).not.toHaveProperty('DROVER_ADMIN_TOKEN');
  });

  it('leaves optional variables out when unset, and adds the autopilot and env-prompt ones when set', () => {
    const minimal = agentEnvironment({ runnerEnv, drover: { ...DROVER, channelId: null, ticketSlug: null }, credentials: [], credentialValues: {} });
    expect(Object.keys(minimal.env).sort()).toEqual([
      'DROVER_API_URL', 'DROVER_ORG', 'DROVER_POD_KEY', 'DROVER_POD_TOKEN', 'DROVER_WORKSPACE', 'HOME', 'LANG', 'PATH', 'TERM',
    ]);
    expect(minimal.missingCredentials).toEqual([]);

    const autopilot = agentEnvironment({
      runnerEnv,
      drover: { ...DROVER, statusFile: '/srv/drover/state/p-abc/status.json', iteration: 2, prompt: 'Do it\nnow' },
      credentials: [],
      credentialValues: {},
    });
    expect(autopilot.env).toMatchObject({
      DROVER_STATUS_FILE: '/srv/drover/state/p-abc/status.json',
      DROVER_ITERATION: '2',
      DROVER_PROMPT: 'Do it\nnow',
    });
    expect(Object.keys(autopilot.env)).toHaveLength(12);
  });

  it('fills in defaults for absent inherited variables', () => {
    const { env } = agentEnvironment({ runnerEnv: { HOME: '/home/r', SECRET_FROM_RUNNER: 'x' }, drover: DROVER, credentials: [], credentialValues: {} });
    expect(env.PATH).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(env.LANG).toBe('C.UTF-8');
    expect(env.TERM).toBe('dumb');
    expect(env.HOME).toBe('/home/r');
    const noHome = agentEnvironment({ runnerEnv: {}, drover: DROVER, credentials: [], credentialValues: {} });
    expect(noHome.env.HOME).toBe(os.userInfo().homedir);
  });

  it('never lets a credential replace a DROVER_* variable, and reports names that cannot be variables', () => {
    const { env, missingCredentials } = agentEnvironment({
      runnerEnv,
      drover: DROVER,
      credentials: ['DROVER_POD_TOKEN', 'NOT-A-NAME', 'GITHUB_TOKEN', 'GITHUB_TOKEN', 'toString'],
      credentialValues: { DROVER_POD_TOKEN: 'stolen', 'NOT-A-NAME': 'x', GITHUB_TOKEN: '' },
    });
    expect(env.DROVER_POD_TOKEN).toBe(DROVER.podToken);
    expect(env.GITHUB_TOKEN).toBe('');
    expect(missingCredentials).toEqual(['DROVER_POD_TOKEN', 'NOT-A-NAME', 'toString']);
  });
});

let tmp: string;
let standInBin: string;
let systemBash: string;

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-agents-')));
  standInBin = path.join(tmp, 'stand-in-bin');
  fs.mkdirSync(standInBin);
  fs.chmodSync(STAND_IN, 0o755);
  for (const name of ['claude', 'codex', 'gemini', 'aider', 'opencode', 'my-agent']) {
    fs.symlinkSync(STAND_IN, path.join(standInBin, name));
  }
  const bash = await findExecutable('bash', process.env.PATH ?? '');
  if (!bash) throw new Error('bash is needed for these tests');
  systemBash = bash;
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('ENV variables and permission modes (docs/agents.md)', () => {
  it('ENV variables reach the agent; LANG and TERM may be set so; credentials and DROVER_* win; reserved names are dropped', () => {
    const { env } = agentEnvironment({
      runnerEnv: { PATH: '/usr/bin', HOME: '/home/r', LANG: 'C.UTF-8' },
      drover: DROVER,
      variables: { ANTHROPIC_BASE_URL: 'http://10.0.0.5:8080', LANG: 'de_DE.UTF-8', API_KEY: 'from-env', DROVER_POD_KEY: 'p-evil', PATH: '/evil', HOME: '/', lower: 'x', NUL: 'a\0b' },
      credentials: ['API_KEY'],
      credentialValues: { API_KEY: 'from-credentials' },
    });
    expect(env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://10.0.0.5:8080', LANG: 'de_DE.UTF-8', API_KEY: 'from-credentials', DROVER_POD_KEY: DROVER.podKey, PATH: '/usr/bin', HOME: '/home/r' });
    expect(env).not.toHaveProperty('lower');
    expect(env).not.toHaveProperty('NUL');
  });

  it('envNameProblem: upper-case names, not DROVER_*, PATH or HOME', () => {
    expect(envNameProblem('ANTHROPIC_BASE_URL')).toBeNull();
    expect(envNameProblem('_X1')).toBeNull();
    expect(envNameProblem('LANG')).toBeNull();
    expect(envNameProblem('lower')).toMatch(/must be an environment variable name/);
    expect(envNameProblem('1X')).toMatch(/must be an environment variable name/);
    expect(envNameProblem('DROVER_X')).toMatch(/reserved/);
    expect(envNameProblem('PATH')).toMatch(/reserved/);
    expect(envNameProblem('HOME')).toMatch(/reserved/);
    expect(envNameProblem('A'.repeat(129))).toMatch(/at most 128/);
  });

  it('permissionModeProblem: each agent its own values; aider, shell and custom agents none', () => {
    expect(builtinAgent('claude-code')!.permissionModes).toEqual(['default', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'plan']);
    expect(builtinAgent('codex')!.permissionModes).toEqual(['read-only', 'workspace-write', 'danger-full-access']);
    expect(builtinAgent('gemini-cli')!.permissionModes).toEqual(['default', 'auto_edit', 'yolo', 'plan']);
    expect(builtinAgent('opencode')!.permissionModes).toEqual(['auto', 'default']);
    for (const slug of BUILTIN_AGENT_SLUGS) {
      const agent = builtinAgent(slug)!;
      for (const mode of agent.permissionModes) expect(permissionModeProblem(slug, mode)).toBeNull();
      // The default is one of the agent's own values.
      if (agent.defaultPermissionMode !== null) expect(agent.permissionModes).toContain(agent.defaultPermissionMode);
    }
    expect(permissionModeProblem('codex', 'default')).toBe('permission_mode of codex must be one of read-only, workspace-write, danger-full-access, got "default"');
    expect(permissionModeProblem('aider', 'default')).toBe('the agent "aider" takes no permission_mode');
    expect(permissionModeProblem('my-bot', 'auto')).toBe('the agent "my-bot" takes no permission_mode');
  });

  it('each mode becomes the flag its CLI takes', () => {
    expect(argvOf('claude-code', { permissionMode: 'dontAsk' }).args).toContain('dontAsk');
    expect(argvOf('codex', { permissionMode: 'read-only' }).args.slice(0, 4)).toEqual(['exec', '--json', '--sandbox', 'read-only']);
    expect(argvOf('gemini-cli', { permissionMode: 'plan' }).args.slice(0, 4)).toEqual(['--output-format', 'stream-json', '--approval-mode', 'plan']);
    expect(argvOf('opencode', { permissionMode: 'auto' }).args).toContain('--auto');
    expect(argvOf('opencode', { permissionMode: 'default' }).args).not.toContain('--auto');
    expect(() => argvOf('gemini-cli', { permissionMode: 'bypassPermissions' })).toThrow(/must be one of default, auto_edit, yolo, plan/);
  });
});

describe('detectAgents', () => {
  it('lists the built-in agents whose program is an executable file on PATH', async () => {
    const dir = path.join(tmp, 'detect-a');
    fs.mkdirSync(dir);
    fs.symlinkSync(STAND_IN, path.join(dir, 'claude'));
    fs.symlinkSync(STAND_IN, path.join(dir, 'codex'));
    fs.writeFileSync(path.join(dir, 'gemini'), '#!/bin/sh\n', { mode: 0o644 }); // not executable
    fs.mkdirSync(path.join(dir, 'aider')); // a directory, x bit and all
    fs.symlinkSync(path.join(dir, 'missing'), path.join(dir, 'opencode')); // dangling
    expect(await detectAgents(dir)).toEqual(['claude-code', 'codex']);

    const withBash = path.join(tmp, 'detect-b');
    fs.mkdirSync(withBash);
    fs.symlinkSync(systemBash, path.join(withBash, 'bash'));
    expect(await detectAgents([path.join(tmp, 'nowhere'), dir, withBash].join(path.delimiter))).toEqual(['claude-code', 'codex', 'shell']);
    expect(await detectAgents(standInBin)).toEqual(['claude-code', 'codex', 'gemini-cli', 'aider', 'opencode']);
    expect(await detectAgents('')).toEqual([]);
  });

  it('ignores empty and relative PATH entries (they would mean the workspace)', async () => {
    expect(pathDirectories(['', '.', 'bin', '/usr/bin', '/usr/bin', '/bin'].join(path.delimiter))).toEqual(['/usr/bin', '/bin']);
    const previous = process.cwd();
    process.chdir(standInBin);
    try {
      expect(await detectAgents(['', '.'].join(path.delimiter))).toEqual([]);
    } finally {
      process.chdir(previous);
    }
  });

  it('adds the custom agents whose command is found', async () => {
    const customs: CustomAgentDefinition[] = [
      { slug: 'on-path', command: 'my-agent', args: [], prompt_position: 'last' },
      { slug: 'absolute', command: STAND_IN, args: [], prompt_position: 'last' },
      { slug: 'missing', command: 'no-such-agent', args: [], prompt_position: 'last' },
      { slug: 'absolute-missing', command: path.join(tmp, 'no-such-agent'), args: [], prompt_position: 'last' },
      { slug: 'in-repo', command: './scripts/agent.sh', args: [], prompt_position: 'stdin' },
      { slug: 'codex', command: 'my-agent', args: [], prompt_position: 'last' },
      { slug: 'on-path', command: 'my-agent', args: ['again'], prompt_position: 'last' },
    ];
    expect(await detectAgents(standInBin, customs)).toEqual([
      'claude-code', 'codex', 'gemini-cli', 'aider', 'opencode', 'on-path', 'absolute', 'in-repo',
    ]);
    expect(await findExecutable('my-agent', standInBin)).toBe(path.join(standInBin, 'my-agent'));
    expect(await findExecutable('relative/path', standInBin)).toBeNull();
  });

  it('lookups asked while the same one is under way share it; one that ended is not reused', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'path-'));
    const burst = Array.from({ length: 50 }, () => findExecutable('later-agent', dir));
    expect(new Set(burst).size).toBe(1); // one lookup for the whole burst
    expect(findExecutable('later-agent', standInBin)).not.toBe(burst[0]); // another PATH: its own
    expect(await Promise.all(burst)).toEqual(Array(50).fill(null));
    fs.symlinkSync(STAND_IN, path.join(dir, 'later-agent'));
    // The program appeared after the burst's lookup ended: a new lookup finds it.
    expect(await findExecutable('later-agent', dir)).toBe(path.join(dir, 'later-agent'));
    fs.rmSync(path.join(dir, 'later-agent'));
    expect(await findExecutable('later-agent', dir)).toBeNull();
  });
});

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(invocation: AgentInvocation, env: Record<string, string>, cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(invocation.command, invocation.args, {
      env,
      cwd,
      stdio: [invocation.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (invocation.stdin !== null) child.stdin?.end(invocation.stdin);
  });
}

interface StandInRecord {
  name: string;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  stdin: string | null;
  sessionId: string;
}

function records(workspace: string): StandInRecord[] {
  const file = path.join(workspace, '.stand-in-record.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StandInRecord);
}

let workspaceCount = 0;
function newWorkspace(): string {
  workspaceCount += 1;
  const dir = path.join(tmp, `ws-${workspaceCount}`);
  fs.mkdirSync(dir);
  return dir;
}

function minimalEnv(workspace: string, extra: { prompt?: string; statusFile?: string; iteration?: number } = {}) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  return agentEnvironment({
    runnerEnv: {
      PATH: [standInBin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
      HOME: home,
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      SECRET_FROM_RUNNER: 'must-not-leak',
      STAND_IN_RECORD: path.join(tmp, 'must-not-be-used.jsonl'),
      STAND_IN_EXIT: '9',
      ANTHROPIC_API_KEY: 'from-the-runner-process-env',
    },
    drover: { ...DROVER, workspace, channelId: 3, ticketSlug: 'ACME-1', ...extra },
    credentials: ['ANTHROPIC_API_KEY'],
    credentialValues: { ANTHROPIC_API_KEY: 'configured-anthropic' },
  }).env;
}

describe('real spawn with the minimal environment', () => {
  const PROGRAMS: Record<Exclude<BuiltinAgentSlug, 'shell'>, string> = {
    'claude-code': 'claude',
    codex: 'codex',
    'gemini-cli': 'gemini',
    aider: 'aider',
    opencode: 'opencode',
  };
  const trickyPrompt = '- Fix "the" bug in $HOME/`src`\n--help\n\'done\'';

  for (const [slug, program] of Object.entries(PROGRAMS) as [Exclude<BuiltinAgentSlug, 'shell'>, string][]) {
    it(`${slug}: ${program} receives exactly the argv, stdin and environment built`, async () => {
      const workspace = newWorkspace();
      const env = minimalEnv(workspace);
      const model = slug === 'opencode' ? 'anthropic/claude-sonnet-4-5' : 'some-model';
      // Spawned by the test's own user: as root, Claude Code (and its stand-in) refuse the default
      // bypassPermissions, so claude-code gets another mode here (test/sandbox/modes.test.ts covers it).
      const permissionMode = slug === 'claude-code' && process.getuid?.() === 0 ? 'acceptEdits' : undefined;
      const invocation = buildInvocation({ builtin: slug }, { prompt: trickyPrompt, model, maxTurns: 7, permissionMode, workspace });

      const result = await run(invocation, env, workspace);
      expect(result.code, result.stderr).toBe(0);
      const [record, ...more] = records(workspace);
      expect(more).toEqual([]);
      expect(record.name).toBe(program);
      expect(record.argv).toEqual(invocation.args);
      expect(record.env).toEqual(env);
      expect(record.env).not.toHaveProperty('SECRET_FROM_RUNNER');
      expect(record.env.ANTHROPIC_API_KEY).toBe('configured-anthropic');
      expect(record.cwd).toBe(workspace);
      expect(record.stdin).toBe(invocation.stdin ?? '');
      expect(fs.existsSync(path.join(tmp, 'must-not-be-used.jsonl'))).toBe(false);

      const output = result.stdout + result.stderr;
      if (supportsResume(slug)) {
        const sessionId = parseAgentOutput(slug, result.stdout).session_id;
        expect(sessionId).toBe(record.sessionId);

        // The next run resumes it; the stand-in reports the same session.
        const next = buildInvocation({ builtin: slug }, { prompt: 'continue', workspace, permissionMode, resumeSessionId: sessionId });
        const again = await run(next, env, workspace);
        expect(again.code).toBe(0);
        expect(records(workspace)[1].argv).toEqual(next.args);
        expect(parseAgentOutput(slug, again.stdout).session_id).toBe(sessionId);
      } else {
        expect(parseAgentOutput(slug, output).session_id).toBeNull();
      }
    });
  }

  it('custom agents: each prompt_position reaches the program as built', async () => {
    for (const position of ['last', 'first', 'stdin', 'env'] as const) {
      const workspace = newWorkspace();
      const definition: CustomAgentDefinition = { slug: 'reviewer', command: 'my-agent', args: ['--flag', 'value with space'], prompt_position: position };
      const invocation = buildInvocation(definition, { prompt: trickyPrompt, workspace });
      const env = minimalEnv(workspace, position === 'env' ? { prompt: trickyPrompt } : {});
      const result = await run(invocation, env, workspace);
      expect(result.code, position).toBe(0);
      const [record] = records(workspace);
      expect(record.name).toBe('my-agent');
      expect(record.argv, position).toEqual(invocation.args);
      expect(record.stdin, position).toBe(position === 'stdin' ? trickyPrompt : '');
      expect(record.env, position).toEqual(env);
      expect(record.env.DROVER_PROMPT, position).toBe(position === 'env' ? trickyPrompt : undefined);
    }
  });

  it('shell: the prompt is a bash script; its exit status is the agent\'s', async () => {
    const workspace = newWorkspace();
    const env = minimalEnv(workspace);
    const hi = await run(buildInvocation({ builtin: 'shell' }, { prompt: 'echo hi; exit 3', workspace }), env, workspace);
    expect(hi).toEqual({ code: 3, stdout: 'hi\n', stderr: '' });

    const script = [
      'set -u',
      'printenv SECRET_FROM_RUNNER || echo "no runner secret"',
      'echo "pod=$DROVER_POD_KEY ws=$DROVER_WORKSPACE cwd=$(pwd)"',
      'echo "$ANTHROPIC_API_KEY"',
    ].join('\n');
    const envCheck = await run(buildInvocation('shell', { prompt: script, workspace }), env, workspace);
    expect(envCheck.code).toBe(0);
    expect(envCheck.stdout).toBe(`no runner secret\npod=p-abc123 ws=${workspace} cwd=${workspace}\nconfigured-anthropic\n`);

    const dash = await run(buildInvocation('shell', { prompt: '-n; echo ran', workspace }), env, workspace);
    // "-n" is run as a (missing) command, not read as bash's no-execute option.
    expect(dash.stdout).toBe('ran\n');
    expect(dash.stderr).toMatch(/-n: command not found/);
  });
});

describe('stand-in agent fixture', () => {
  it('honours STAND_IN_RECORD and STAND_IN_EXIT when they are in its environment', async () => {
    const workspace = newWorkspace();
    const recordFile = path.join(tmp, 'explicit-record.jsonl');
    const env = { PATH: [standInBin, path.dirname(process.execPath)].join(path.delimiter), STAND_IN_RECORD: recordFile, STAND_IN_EXIT: '5' };
    const result = await run({ command: 'codex', args: ['exec', '--', 'hello'], stdin: null }, env, workspace);
    expect(result.code).toBe(5);
    expect(records(workspace)).toEqual([]);
    const [record] = fs.readFileSync(recordFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as StandInRecord);
    expect(record).toMatchObject({ name: 'codex', argv: ['exec', '--', 'hello'], env, cwd: workspace, stdin: '' });
  });

  it('reads directives from the prompt under the minimal environment (exit code, autopilot status)', async () => {
    const workspace = newWorkspace();
    const failing = buildInvocation({ builtin: 'claude-code' }, { prompt: 'please STAND_IN_EXIT=4 now', permissionMode: 'acceptEdits', workspace });
    expect((await run(failing, minimalEnv(workspace), workspace)).code).toBe(4);

    const statusFile = path.join(workspace, 'status.json');
    for (const [iteration, expected] of [[1, 'continue'], [2, 'done']] as const) {
      const invocation = buildInvocation({ builtin: 'opencode' }, { prompt: 'work STAND_IN_DONE_AT=2', workspace });
      const result = await run(invocation, minimalEnv(workspace, { statusFile, iteration }), workspace);
      expect(result.code).toBe(0);
      expect(JSON.parse(fs.readFileSync(statusFile, 'utf8'))).toMatchObject({ status: expected });
    }
  });
});
