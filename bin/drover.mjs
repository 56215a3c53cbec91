#!/usr/bin/env node
// Runs a bundled build of the TypeScript sources, made (or refreshed) on start by ./build.mjs: the
// API client commands from a small bundle of their own (src/cli/client/main.ts), `drover mcp` and
// `drover admin` from others (src/mcp/main.ts, src/cli/admin-main.ts), serve and runner from the
// full one (src/main.ts).
import { entryModule } from './build.mjs';

/** The first words of the client commands (CLIENT_WORDS in src/cli/client/main.ts), the top-level help and the version. */
const CLIENT = new Set(['login', 'events', 'whoami', 'activity', 'tickets', 'pods', 'loops', 'channels', 'runners', 'repos', 'users', 'presets', 'help', '--help', '-h', 'version', '--version', undefined]);

const argv = process.argv.slice(2);
/** The command's first word, after the client options that may come before it (`--profile NAME`, `--json`). */
function commandWord(args) {
  let i = 0;
  while (args[i] === '--json' || args[i] === '--profile' || args[i]?.startsWith('--profile=')) i += args[i] === '--profile' ? 2 : 1;
  return args[i];
}
try {
  const word = commandWord(argv);
  const own = argv[0] === 'mcp' || argv[0] === 'admin' ? argv[0] : null;
  const { main } = await import(await entryModule(own ?? (CLIENT.has(word) ? 'cli' : 'main')));
  await main(argv);
} catch (error) {
  // Configuration and start-up errors are one line for the operator, not a stack trace.
  process.stderr.write(`drover: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.env.DROVER_DEBUG) console.error(error);
  process.exit(1);
}
