import { parseArgs } from 'node:util';
import { unknownCommand } from './cli/suggest.ts';
import { RUNNER_USAGE, SERVE_USAGE, TOP_USAGE } from './cli/usage.ts';
import type { RunnerFlags } from './cli/runner.ts';
import pkg from '../package.json' with { type: 'json' };

const wantsHelp = (args: string[]) => args.includes('--help') || args.includes('-h');
/** `drover serve --version`, `drover runner --version`: the version of this bundle (`drover --version` is the client's). */
const wantsVersion = (args: string[]) => args.includes('--version');

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>, usage: string): Record<string, string | (string | boolean)[] | boolean | undefined> | null {
  try {
    return parseArgs({ args, options }).values;
  } catch (error) {
    process.stderr.write(`drover: ${(error as Error).message}\n\n${usage}\n`);
    process.exitCode = 2;
    return null;
  }
}

/**
 * The full entry: the server, runners and administration, and (through a lazy import) the client
 * commands, which bin/drover.mjs normally runs from their own small bundle (src/cli/client/main.ts).
 */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      if (wantsHelp(rest)) return void process.stdout.write(`${SERVE_USAGE}\n`);
      if (wantsVersion(rest)) return void process.stdout.write(`${pkg.version}\n`);
      const values = parse(rest, { host: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' }, 'no-local-runner': { type: 'boolean' } }, SERVE_USAGE);
      if (!values) return;
      const [{ loadServerConfig }, { startServer }] = await Promise.all([import('./config.ts'), import('./serve/server.ts')]);
      await startServer(loadServerConfig(values), { handleSignals: true });
      return;
    }
    case 'runner': {
      if (wantsHelp(rest)) return void process.stdout.write(`${RUNNER_USAGE}\n`);
      if (wantsVersion(rest)) return void process.stdout.write(`${pkg.version}\n`);
      const names = ['server', 'token', 'name', 'labels', 'max-pods', 'work-dir', 'drain-seconds', 'sandbox', 'pod-memory-mb', 'pod-pids', 'pod-cpus', 'pod-disk-mb', 'prices'];
      const options = { ...Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])), 'allow-host': { type: 'string' as const, multiple: true } };
      const values = parse(rest, options, RUNNER_USAGE);
      if (!values) return;
      const { runRunner } = await import('./cli/runner.ts');
      await runRunner(values as RunnerFlags);
      return;
    }
    case 'admin': {
      const { runAdmin } = await import('./cli/admin.ts');
      process.exitCode = await runAdmin(rest);
      return;
    }
    case 'mcp': {
      // Normally run from its own bundle (bin/drover.mjs); here for `tsx src/main.ts mcp`.
      const { main: runMcp } = await import('./mcp/main.ts');
      await runMcp(argv);
      return;
    }
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(`${TOP_USAGE}\n`);
      return;
    default: {
      const client = await import('./cli/client/main.ts');
      const commonOption = command === '--json' || command === '--profile' || command.startsWith('--profile=');
      if (command === '--version' || command === 'version' || commonOption || client.CLIENT_WORDS.includes(command)) return client.main(argv);
      process.stderr.write(unknownCommand(command, client.TOP_WORDS));
      process.exitCode = 2;
    }
  }
}
