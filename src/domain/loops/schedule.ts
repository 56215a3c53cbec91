import { Cron } from 'croner';
import { invalid } from '../../errors.ts';

/**
 * Five-field cron (minute hour day-of-month month day-of-week; lists, ranges, steps and names),
 * evaluated in an IANA time zone with croner. Day-of-month and day-of-week combine with OR when
 * both are restricted, as in classic cron.
 */
function cron(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true, mode: '5-part', domAndDow: false });
}

function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

export function validateCron(expression: string, timezone: string): void {
  if (!isTimezone(timezone)) throw invalid('/cron_timezone', `"${timezone}" is not an IANA time zone name (e.g. UTC, Europe/Berlin)`);
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || expression.trim().startsWith('@')) {
    throw invalid('/cron_expression', `must have exactly five fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  }
  try {
    cron(expression, timezone);
  } catch (error) {
    throw invalid('/cron_expression', `is not a valid cron expression: ${(error as Error).message}`);
  }
}

/** The first slot strictly after `after` (epoch ms), or null if the expression never fires again. */
export function nextRunAt(expression: string, timezone: string, after: number): number | null {
  return cron(expression, timezone).nextRun(new Date(after))?.getTime() ?? null;
}

/** The most recent slot in (notBefore, now], or null: after downtime only this one may fire. */
export function latestSlotAtOrBefore(expression: string, timezone: string, now: number, notBefore: number): number | null {
  const [latest] = cron(expression, timezone).previousRuns(1, new Date(now + 1));
  const at = latest?.getTime();
  return at !== undefined && at > notBefore && at <= now ? at : null;
}
