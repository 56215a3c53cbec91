import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** A batch of log lines written to stdout at once, and the longest a line waits for its batch. */
export const LOG_BATCH_BYTES = 4096;
export const LOG_FLUSH_MS = 100;

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * The server's logger: one JSON object per line (for collectors) unless stdout is a terminal,
 * where lines are formatted for people (`DROVER_LOG_FORMAT` overrides the choice). Both show the
 * same records, so what is kept out of one (keys, tokens) is kept out of the other.
 */
export function createLogger(options: { level: string; format: LogFormat; stdout?: NodeJS.WriteStream }): Logger {
  const stdout = options.stdout ?? process.stdout;
  const human = options.format === 'pretty' || (options.format === 'auto' && stdout.isTTY === true);
  // pino's own writer on fd 1 is faster than going through process.stdout. It writes without
  // blocking the event loop, and in batches: lines are written once LOG_BATCH_BYTES of them are
  // waiting, or every LOG_FLUSH_MS, whichever comes first (one write per few dozen request lines
  // under load instead of one per line or two), and what is still buffered when the process exits
  // is written synchronously then (pino registers that on exit). docs/decisions.md "Operations".
  if (!human) {
    if (options.stdout) return pino({ level: options.level }, options.stdout);
    return pino({ level: options.level }, pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }));
  }
  return pino(
    { level: options.level },
    pretty({ destination: stdout, colorize: stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
  );
}
