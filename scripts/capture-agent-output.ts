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
import fs from 'node:fs';
import path from 'node:path';
import { parseAgentOutput } from '../src/agents/index.ts';
import { REAL_AGENT_SLUGS, ensureAgentClis, writeAgentHome, type RealAgentSlug } from '../test/helpers/agent-clis.ts';
import { runAgentCli } from '../test/helpers/agent-run.ts';
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

async function run(slug: RealAgentSlug, workspace: string, prompt: string, resumeSessionId: string | null): Promise<string> {
  const { code, stdout, stderr } = await runAgentCli({ slug, clis, mockUrl: mock.url, home, workspace, prompt, resumeSessionId });
  if (code !== 0) throw new Error(`${slug} exited with ${code}:\n${stderr}`);
  return stdout;
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
