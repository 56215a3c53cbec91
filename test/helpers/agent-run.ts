/**
 * Runs one of the published agent CLIs (test/helpers/agent-clis.ts) outside Drover, with the exact
 * command line and environment Drover builds for it (src/agents), against a model stand-in
 * (test/helpers/model-mocks): what the recording scripts use to capture what a CLI prints.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { agentEnvironment, buildInvocation, type BuiltinAgentSlug } from '../../src/agents/index.ts';
import { MOCK_KEY_VARIABLES, type AgentClis, type RealAgentSlug } from './agent-clis.ts';

export interface AgentRun {
  slug: RealAgentSlug;
  clis: AgentClis;
  /** The stand-in's URL. */
  mockUrl: string;
  /** The agent's HOME (written by `writeAgentHome`) and working directory. */
  home: string;
  workspace: string;
  prompt: string;
  resumeSessionId?: string | null;
  model?: string;
}

export interface AgentRunOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they came, interleaved: what a pod's output holds. */
  combined: string;
}

/** The CLI's output once it has exited (whatever its exit code). */
export function runAgentCli(run: AgentRun): Promise<AgentRunOutput> {
  const { slug, workspace } = run;
  // Root may not bypass Claude Code's permissions; acceptEdits lets it write in the workspace.
  const invocation = buildInvocation(
    { builtin: slug as BuiltinAgentSlug },
    { prompt: run.prompt, workspace, resumeSessionId: run.resumeSessionId ?? null, ...(run.model ? { model: run.model } : {}), ...(slug === 'claude-code' ? { permissionMode: 'acceptEdits' } : {}) },
  );
  const { env } = agentEnvironment({
    runnerEnv: { PATH: `${run.clis.binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: run.home, LANG: 'C.UTF-8' },
    drover: { apiUrl: 'http://127.0.0.1:9', org: 'default', podKey: 'p-capture', podToken: 'drvpod_capture', workspace },
    variables: { ANTHROPIC_BASE_URL: run.mockUrl, GOOGLE_GEMINI_BASE_URL: run.mockUrl, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' },
    credentials: [MOCK_KEY_VARIABLES[slug]],
    credentialValues: { [MOCK_KEY_VARIABLES[slug]]: 'mock-key-for-capture' },
  });
  return new Promise((resolve, reject) => {
    const child = spawn(invocation.command, invocation.args, { cwd: workspace, env, stdio: [invocation.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '', combined: '' };
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]!.setEncoding('utf8').on('data', (chunk: string) => {
        out[stream] += chunk;
        out.combined += chunk;
      });
    }
    if (invocation.stdin !== null) child.stdin!.end(invocation.stdin);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ...out }));
  });
}
