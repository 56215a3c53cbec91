/**
 * The server's logger on fd 1 (src/logger.ts, docs/decisions.md "Operations"): lines are written in
 * batches, yet a lone line reaches stdout without more logging to fill its batch, and every line
 * still buffered when the process exits is written then. Run in a child process whose stdout is a
 * pipe, as `drover serve`'s is under a supervisor.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/runner-process.ts';

/** A child that logs through createLogger (json, no stdout given: fd 1) as `script` says. */
function child(script: string) {
  const source = `import { createLogger } from './src/logger.ts'; const log = createLogger({ level: 'info', format: 'json' }); ${script}`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, lines: () => out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { msg: string; n?: number }), exited };
}

describe('createLogger on stdout', () => {
  it('a lone line is written without waiting for a batch to fill', async () => {
    const { proc, lines, exited } = child(`log.info('lone line'); setInterval(() => {}, 1000);`);
    try {
      await waitFor(() => lines().some((line) => line.msg === 'lone line'), { what: 'the lone line on stdout', timeout: 20_000 });
    } finally {
      proc.kill('SIGKILL');
      await exited;
    }
  });

  it('every line logged before the process exits is written', async () => {
    const { lines, exited } = child(`for (let n = 0; n < 500; n++) log.info({ n }, 'line'); process.exit(0);`);
    expect(await exited).toBe(0);
    expect(lines().map((line) => line.n)).toEqual(Array.from({ length: 500 }, (_, n) => n));
  });
});
