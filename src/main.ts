import { parseArgs } from 'node:util';
import { adminUsage, runAdmin } from './cli/admin.ts';
import { loadServerConfig } from './config.ts';
import { runRunner } from './cli/runner.ts';
import { startServer } from './server.ts';

const USAGE = `drover: a control plane for AI coding agents

Usage:
  drover serve [--host H] [--port P] [--data-dir D] [--no-local-runner]
      run the server (SQLite in the data directory unless DATABASE_URL=postgres://… is set)
  drover runner --server <url> --token <registration token> [--name N] [--labels a,b] [--max-pods N] [--work-dir DIR]
      run a runner: it registers once, then keeps its own credential in the work dir
  drover admin <resource> <action> [flags]
      organizations, API keys, users, repositories, runner tokens and custom agents
      (drover admin --help; drover admin <resource> --help; drover admin <resource> <action> --help)
  drover --version`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({
        args: rest,
        options: {
          host: { type: 'string' },
          port: { type: 'string' },
          'data-dir': { type: 'string' },
          'no-local-runner': { type: 'boolean' },
        },
      });
      const config = loadServerConfig(values);
      await startServer(config, { handleSignals: true });
      return;
    }
    case 'runner': {
      const { values } = parseArgs({
        args: rest,
        options: {
          server: { type: 'string' },
          token: { type: 'string' },
          name: { type: 'string' },
          labels: { type: 'string' },
          'max-pods': { type: 'string' },
          'work-dir': { type: 'string' },
          'drain-seconds': { type: 'string' },
        },
      });
      await runRunner(values);
      return;
    }
    case 'admin': {
      if (rest[0] === '--help' || rest[0] === 'help') {
        process.stdout.write(adminUsage() + '\n');
        return;
      }
      process.exitCode = await runAdmin(rest);
      return;
    }
    case '--version':
    case 'version': {
      const { default: pkg } = await import('../package.json', { with: { type: 'json' } });
      process.stdout.write(`${pkg.version}\n`);
      return;
    }
    case undefined:
    case '--help':
    case 'help':
      process.stdout.write(USAGE + '\n');
      return;
    default:
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
      process.exitCode = 2;
  }
}
