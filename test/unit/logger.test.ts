/**
 * The server's logger (src/logger.ts): JSON lines unless stdout is a terminal, where lines are
 * formatted for people; DROVER_LOG_FORMAT forces either.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.ts';

function capture(isTTY: boolean) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
  stream.isTTY = isTTY;
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

/** Until every capture has a whole line (the logger writes asynchronously). */
const written = (...outs: { text(): string }[]) => vi.waitUntil(() => outs.every((out) => out.text().endsWith('\n')), { timeout: 5_000 });

describe('createLogger', () => {
  it('auto, not a terminal: one JSON object per line', async () => {
    const out = capture(false);
    createLogger({ level: 'info', format: 'auto', stdout: out.stream }).info({ reqId: 'req_1', status: 200 }, 'request');
    await written(out);
    const record = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 30, msg: 'request', reqId: 'req_1', status: 200 });
  });

  it('auto, a terminal: a line for people (time, level, message, fields), not JSON', async () => {
    const out = capture(true);
    createLogger({ level: 'info', format: 'auto', stdout: out.stream }).info({ reqId: 'req_2', status: 201 }, 'request');
    await written(out);
    const text = out.text();
    expect(text.trim().startsWith('{')).toBe(false);
    expect(text).toMatch(/INFO/);
    expect(text).toMatch(/request/);
    expect(text).toMatch(/req_2/);
  });

  it('json and pretty override the terminal check', async () => {
    const tty = capture(true);
    createLogger({ level: 'info', format: 'json', stdout: tty.stream }).info('hello');
    const pipe = capture(false);
    createLogger({ level: 'info', format: 'pretty', stdout: pipe.stream }).info('hello');
    await written(tty, pipe);
    expect(JSON.parse(tty.text().trim())).toMatchObject({ msg: 'hello' });
    expect(pipe.text()).toMatch(/INFO.*hello/);
    expect(pipe.text().trim().startsWith('{')).toBe(false);
  });
});
