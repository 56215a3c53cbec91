/**
 * Log levels of refused requests (docs/decisions.md "Operations"): a 503 NO_AVAILABLE_RUNNER, or
 * any other 5xx the server answers on purpose, is one warn line with its code and no stack; a 4xx
 * adds nothing to its request line; only a fault of the server (500 INTERNAL) is an error-level
 * line, with the stack. Read from the JSON lines of a real pino logger.
 */
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  code?: string;
  err?: { stack?: string };
  [field: string]: unknown;
}

const WARN = 40;
const ERROR = 50;

describe.each(DATABASES)('log levels of refused requests (%s)', (kind) => {
  let t: TestApp;
  let lines: LogLine[];

  beforeEach(async () => {
    lines = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
        callback();
      },
    });
    t = await startTestApp(kind, { logger: pino({ level: 'trace' }, stream) });
  });
  afterEach(async () => {
    await t.close();
  });

  /** The log lines of one request, by the request id its answer carries. */
  const linesOf = (requestId: string) => lines.filter((line) => line.reqId === requestId);

  it('503 NO_AVAILABLE_RUNNER: one warn line naming the code, no stack, nothing at error level', async () => {
    const response = await t.request({ method: 'POST', url: t.path('/pods'), payload: { agent_slug: 'shell', agentfile_layer: 'PROMPT "true"' } });
    const body = expectError(response, 503, 'NO_AVAILABLE_RUNNER');
    const mine = linesOf(body.request_id);
    expect(mine.filter((line) => line.level >= ERROR)).toEqual([]);
    const warned = mine.filter((line) => line.level === WARN);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ code: 'NO_AVAILABLE_RUNNER', msg: 'request refused' });
    for (const line of mine) {
      expect(line.err, JSON.stringify(line)).toBeUndefined();
      expect(JSON.stringify(line)).not.toMatch(/\n\s+at /);
    }
    expect(mine.find((line) => line.msg === 'request')).toMatchObject({ status: 503, level: 30 });
  });

  it('4xx answers log their request line only, at info', async () => {
    const answers = [
      expectError(await t.request({ method: 'GET', url: t.path('/tickets/ACME-999') }), 404, 'NOT_FOUND'),
      expectError(await t.request({ method: 'GET', url: t.path('/tickets'), key: `drv_${'x'.repeat(40)}` }), 401, 'INVALID_API_KEY'),
      expectError(await t.request({ method: 'POST', url: t.path('/tickets'), payload: { type: 'nope' } }), 400, 'VALIDATION_FAILED'),
      expectError(await t.request({ method: 'POST', url: t.path('/pods/p-nope/terminate') }), 404, 'NOT_FOUND'),
    ];
    for (const answer of answers) {
      const mine = linesOf(answer.request_id);
      expect(mine.map((line) => [line.level, line.msg])).toEqual([[30, 'request']]);
    }
  });

  it('a fault of the server (500 INTERNAL) is an error line with its stack', async () => {
    // A table gone from under the server: its query fails as no client could cause.
    await sql`alter table tickets rename to tickets_gone`.execute(t.store.db);
    const body = expectError(await t.request({ method: 'GET', url: t.path('/tickets') }), 500, 'INTERNAL');
    const failed = linesOf(body.request_id).filter((line) => line.level === ERROR);
    expect(failed).toHaveLength(1);
    expect(failed[0].msg).toBe('request failed');
    expect(failed[0].err?.stack).toMatch(/\n\s+at /);
  });
});
