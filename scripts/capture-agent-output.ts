/**
 * Records what the real agent CLIs print (their machine-readable stdout) for the parsers' unit
 * tests: each CLI is run with the exact command line and environment Drover builds for it
 * (src/agents), against the model stand-ins of test/helpers/model-mocks, and its stdout is written
 * to test/fixtures/agent-output/<slug>-<scenario>.jsonl. Run it after moving a pinned version
 * (test/helpers/agent-clis.ts): `npx tsx scripts/capture-agent-output.ts`.
 *
 * Scenarios: `tool` (a shell tool call, then a final text), `resumed` (a second run continuing the
 * first one's session).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { agentEnvironment, buildInvocation, parseAgentOutput, type BuiltinAgentSlug } from '../src/agents/index.ts';
import { MOCK_KEY_VARIABLES, REAL_AGENT_SLUGS, ensureAgentClis, writeAgentHome, type RealAgentSlug } from '../test/helpers/agent-clis.ts';
import { startModelMock } from '../test/helpers/model-mocks/server.ts';

const OUT = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'agent-output');
// Not under /tmp: Codex will not set up its sandbox helper below the temp directory.
const scratch = fs.mkdtempSync('/var/tmp/drover-capture-');
const clis = await ensureAgentClis();
const mock = await startModelMock();
mock.script('tool', [{ shell: 'printf "captured\\n" > proof.txt && cat proof.txt' }, { text: 'I wrote proof.txt.' }]);
mock.script('remember', [{ text: 'I will remember PAPAYA.' }]);
mock.script('recall', [{ text: 'The word was PAPAYA.' }]);
const home = path.join(scratch, 'home');
writeAgentHome(home, mock.url);

function run(slug: RealAgentSlug, workspace: string, prompt: string, resumeSessionId: string | null): Promise<string> {
  // Root may not bypass Claude Code's permissions; acceptEdits lets it write in the workspace.
  const invocation = buildInvocation({ builtin: slug as BuiltinAgentSlug }, { prompt, workspace, resumeSessionId, ...(slug === 'claude-code' ? { permissionMode: 'acceptEdits' } : {}) });
  const { env } = agentEnvironment({
    runnerEnv: { PATH: `${clis.binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8' },
    drover: { apiUrl: 'http://127.0.0.1:9', org: 'default', podKey: 'p-capture', podToken: 'drvpod_capture', workspace },
    variables: { ANTHROPIC_BASE_URL: mock.url, GOOGLE_GEMINI_BASE_URL: mock.url, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' },
    credentials: [MOCK_KEY_VARIABLES[slug]],
    credentialValues: { [MOCK_KEY_VARIABLES[slug]]: 'mock-key-for-capture' },
  });
  return new Promise((resolve, reject) => {
    const child = spawn(invocation.command, invocation.args, { cwd: workspace, env, stdio: [invocation.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    if (invocation.stdin !== null) child.stdin!.end(invocation.stdin);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${slug} exited with ${code}:\n${stderr}`))));
  });
}

fs.mkdirSync(OUT, { recursive: true });
for (const slug of REAL_AGENT_SLUGS) {
  const workspace = path.join(scratch, slug);
  fs.mkdirSync(workspace);
  const tool = await run(slug, workspace, 'mock-script:tool Write proof.txt.', null);
  fs.writeFileSync(path.join(OUT, `${slug}-tool.jsonl`), tool);
  const first = await run(slug, workspace, 'mock-script:remember The word is PAPAYA.', null);
  const session = parseAgentOutput(slug, first).session_id;
  const resumed = await run(slug, workspace, 'mock-script:recall What was the word?', session);
  fs.writeFileSync(path.join(OUT, `${slug}-resumed.jsonl`), resumed);
  process.stdout.write(`${slug}: ${JSON.stringify(parseAgentOutput(slug, tool))}\n  resumed: ${JSON.stringify(parseAgentOutput(slug, resumed))}\n`);
}
await mock.close();
fs.rmSync(scratch, { recursive: true, force: true });
