/**
 * The request log line (src/api/plugins/request-log.ts): written without pino's object formatting,
 * it is byte for byte the line `logger.info(fields, 'request')` writes, through the same
 * destination; below the logger's level it is not written; a logger whose line pino would shape
 * otherwise (a mixin, formatters, serializers) gets pino's own line.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { requestLogWriter } from '../../src/api/plugins/request-log.ts';

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  return { stream, lines };
}

const FIELDS = [
  { reqId: 'req_0123456789abcdef0123456789abcdef', method: 'GET', url: '/api/v1/ext/orgs/default/tickets?limit=20', status: 200, ms: 1.3 },
  { reqId: 'req_1', method: 'POST', url: '/a/"quoted"\\back\u2028slash?x=é&y=%00', status: 503, ms: 0 },
  { reqId: 'req_2', method: 'DELETE', url: '/', status: 404, ms: 12345.6 },
];

describe('the request log line', () => {
  it('is the line pino writes for the same fields', () => {
    const fast = capture();
    const slow = capture();
    // One clock for both, so the lines can be compared whole.
    const options = { level: 'info', timestamp: () => ',"time":1764270000000' };
    const logger = pino(options, fast.stream);
    // Built directly, not through pino's own call.
    const info = vi.spyOn(logger, 'info');
    const write = requestLogWriter(logger);
    const reference = pino(options, slow.stream);
    for (const fields of FIELDS) {
      write(fields);
      reference.info(fields, 'request');
    }
    expect(info).not.toHaveBeenCalled();
    expect(fast.lines).toHaveLength(FIELDS.length);
    expect(fast.lines).toEqual(slow.lines);
    expect(JSON.parse(fast.lines[0])).toMatchObject({ level: 30, msg: 'request', ...FIELDS[0] });
  });

  it('is not written below the logger\'s level, and is again once the level allows it', () => {
    const out = capture();
    const logger = pino({ level: 'warn' }, out.stream);
    const write = requestLogWriter(logger);
    write(FIELDS[0]);
    expect(out.lines).toEqual([]);
    logger.level = 'info';
    write(FIELDS[0]);
    expect(out.lines).toHaveLength(1);
  });

  it('leaves a logger that shapes its lines otherwise to pino', () => {
    const out = capture();
    requestLogWriter(pino({ level: 'info', mixin: () => ({ replica: 'r1' }) }, out.stream))(FIELDS[0]);
    requestLogWriter(pino({ level: 'info', formatters: { level: (label) => ({ level: label }) } }, out.stream))(FIELDS[0]);
    requestLogWriter(pino({ level: 'info', serializers: { url: () => 'hidden' } }, out.stream))(FIELDS[0]);
    const [mixed, labelled, serialized] = out.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(mixed).toMatchObject({ replica: 'r1', msg: 'request', reqId: FIELDS[0].reqId });
    expect(labelled).toMatchObject({ level: 'info', msg: 'request', reqId: FIELDS[0].reqId });
    expect(serialized).toMatchObject({ url: 'hidden', msg: 'request', reqId: FIELDS[0].reqId });
  });
});
