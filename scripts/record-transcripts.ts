/**
 * Records what the real agent CLIs print, stdout and stderr interleaved as they come (what a pod's
 * output holds), for the transcript parsers' tests (test/agents/transcript-recorded.test.ts): each
 * CLI is run with the exact command line and environment Drover builds for it, against the model
 * stand-ins of test/helpers/model-mocks, and its output is written to
 * test/fixtures/transcripts/<slug>-<scenario>.out. Run it after moving a pinned version
 * (test/helpers/agent-clis.ts): `npx tsx scripts/record-transcripts.ts`.
 *
 * Scenarios:
 * - `work`: a shell command (`printf … > notes.txt && cat notes.txt`), a file written with the CLI's
 *   own file tool (`greeting.txt`), a shell command that fails (`cat missing.txt`), a final text;
 * - `error`: a shell command, then the model API refuses the next request (HTTP 400).
 * Codex is told to use `gpt-5.5`, a model it knows, so that it offers its `apply_patch` tool.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REAL_AGENT_SLUGS, ensureAgentClis, writeAgentHome } from '../test/helpers/agent-clis.ts';
import { runAgentCli } from '../test/helpers/agent-run.ts';
import { startModelMock } from '../test/helpers/model-mocks/server.ts';
import type { Script } from '../test/helpers/model-mocks/script.ts';

const SCENARIOS: Record<string, Script> = {
  work: [
    { shell: "printf 'hello\\n' > notes.txt && cat notes.txt" },
    { write: { path: 'greeting.txt', content: 'Hello, Drover!\nSecond line.\n' } },
    { shell: 'cat missing.txt' },
    { text: 'Done: wrote greeting.txt; missing.txt does not exist.' },
  ],
  error: [{ shell: 'echo checking' }, { fail: { status: 400, message: 'the model stand-in refuses this request (a scripted failure)' } }],
};

const OUT = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'transcripts');
// Not under /tmp: Codex will not set up its sandbox helper below the temp directory.
const scratch = fs.mkdtempSync('/var/tmp/drover-transcripts-');
const clis = await ensureAgentClis();
const mock = await startModelMock();
for (const [name, script] of Object.entries(SCENARIOS)) mock.script(name, script);
const home = path.join(scratch, 'home');
writeAgentHome(home, mock.url);

try {
  fs.mkdirSync(OUT, { recursive: true });
  for (const slug of REAL_AGENT_SLUGS) {
    for (const scenario of Object.keys(SCENARIOS)) {
      const workspace = path.join(scratch, `${slug}-${scenario}`);
      fs.mkdirSync(workspace);
      const prompt = `mock-script:${scenario} Do the task.`;
      const run = await runAgentCli({ slug, clis, mockUrl: mock.url, home, workspace, prompt, ...(slug === 'codex' ? { model: 'gpt-5.5' } : {}) });
      fs.writeFileSync(path.join(OUT, `${slug}-${scenario}.out`), run.combined);
      process.stdout.write(`${slug} ${scenario}: exit ${run.code}, ${run.combined.length} characters\n`);
    }
  }
} finally {
  await mock.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}
