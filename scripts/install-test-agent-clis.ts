/**
 * `npm run test:agent-clis`: installs the agent CLIs the real-agent tests run (test/agents-real/)
 * into their cache directory, unless they are there already, and prints where they are.
 */
import { agentClisDir, ensureAgentClis } from '../test/helpers/agent-clis.ts';

const clis = await ensureAgentClis();
process.stdout.write(`agent CLIs ready in ${agentClisDir()}\n`);
for (const [slug, file] of Object.entries(clis.executables)) process.stdout.write(`  ${slug}: ${file}\n`);
