import { Cron } from 'croner';
import { AppError, type ErrorDetail } from '../../errors.ts';

/**
 * Loop schedules (docs/api.md "Cron schedules", "Firing after downtime"), evaluated with croner.
 *
 * Syntax: exactly five whitespace-separated fields, minute hour day-of-month month day-of-week.
 * Lists, ranges, `*` steps (`*\/15`, `0-30/10`) and names (`JAN`, `mon`) work; day-of-week 0 and
 * 7 are Sunday. Croner's extensions are accepted as well: `L` (last day of the month, or `FRI L`
 * → `5L` last Friday), `W` (nearest weekday), `#` (`MON#2`), `?` (same as `*`) and a leading `+`
 * in day-of-week (AND instead of OR, see below). Rejected: six- and seven-field forms (seconds,
 * year), nicknames such as `@hourly`, numeric-start steps such as `5/15` (write `5-59/15`), and
 * expressions that match no date at all (`0 0 30 2 *`).
 *
 * Days: when both day-of-month and day-of-week are restricted, a day matches if EITHER matches
 * (classic cron: `0 9 1 * MON` is the 1st of the month and every Monday). A field counts as
 * unrestricted only when it is exactly `*` (or `?`): `*\/2` in day-of-month is a restriction, so
 * `0 0 *\/2 * MON` is odd days OR Mondays (Vixie cron would AND them; croner and POSIX OR them).
 *
 * Slots are whole minutes in `cron_timezone` (an IANA name such as `Europe/Berlin`, `UTC`).
 * Daylight-saving changes follow croner with `fixedTimeRule: 'no-wildcard'`, the Vixie cron rule:
 * - fixed-time schedules (no `*` and no step in the minute and hour fields, e.g. `0 2 * * *`,
 *   `30 1,13 * * *`): a wall time skipped by the spring change fires once, at the end of the gap
 *   (`0 2 * * *` in America/New_York on 2026-03-08 fires at 03:00 EDT = 07:00Z); a wall time that
 *   occurs twice in the autumn fires once, at its first occurrence (EDT);
 * - interval schedules (`*` or a step in minute or hour, e.g. `*\/30 * * * *`): times in the gap
 *   are skipped, and the repeated hour runs twice (once per real occurrence).
 * Either way time only moves forward: a slot is a real instant, never returned twice.
 */

/** Parsed schedules by expression and zone: a burst of due loops shares a few, and parsing is most of a lookup's cost. */
const parsed = new Map<string, Cron>();
const MAX_PARSED = 1000;

function schedule(expression: string, timezone: string): Cron {
  const key = `${timezone}\n${expression}`;
  let cron = parsed.get(key);
  if (!cron) {
    cron = new Cron(expression, { timezone, paused: true, mode: '5-part', domAndDow: false, fixedTimeRule: 'no-wildcard' });
    // Oldest out first; a cron that failed to parse threw above and is never kept.
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, cron);
  }
  return cron;
}

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIELDS = 'minute hour day-of-month month day-of-week';

/** The characters cron fields are made of: digits, names, `*`, `?`, `,`, `/`, `-`, `L`, `W`, `#`, a leading `+`. */
const FIELD = '[0-9A-Za-z*?,/#+-]+';
/**
 * The shape every usable expression has, as the API schema states it: five such fields between
 * optional whitespace. Whether the fields make sense (ranges, names, a date that exists) only
 * croner can say.
 */
export const CRON_PATTERN = `^\\s*${FIELD}(?:\\s+${FIELD}){4}\\s*$`;
/**
 * The shape of an IANA zone name (`UTC`, `Europe/Berlin`, `America/Argentina/Buenos_Aires`,
 * `Etc/GMT+5`): offsets such as `+01:00` do not have it. Whether the zone exists only the
 * runtime's time zone data can say.
 */
export const TIMEZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*$';

/** Why a cron expression is unusable, or null. `timezone` must already be valid. */
export function expressionProblem(expression: string, timezone: string): string | null {
  const text = expression.trim();
  if (text === '') return `must not be empty; use five fields (${FIELDS}), e.g. "0 9 * * MON-FRI"`;
  if (text.startsWith('@')) {
    const same = NICKNAMES[text.toLowerCase()];
    return same
      ? `nicknames such as ${text} are not supported; write the five fields instead ("${same}")`
      : `nicknames such as "${text}" are not supported; use five fields (${FIELDS})`;
  }
  const count = text.split(/\s+/).length;
  if (count !== 5) {
    const why = count === 6 ? ' (a seconds field is not supported)' : count === 7 ? ' (seconds and year fields are not supported)' : '';
    return `must have exactly five fields (${FIELDS}), got ${count}${why}`;
  }
  let cron: Cron;
  try {
    cron = schedule(text, timezone);
  } catch (error) {
    return `is not a valid cron expression: ${String((error as Error).message).replace(/^CronPattern:\s*/, '')}`;
  }
  // Five-field schedules repeat every 400 years (146097 days, a whole number of weeks), and croner
  // searches forward about a thousand years, so "nothing from 2000 on" means "never".
  if (cron.nextRun(new Date(Date.UTC(2000, 0, 1))) === null) return 'never fires: no calendar date matches it (e.g. day 30 of February)';
  return null;
}

/** Why a time zone is unusable, or null. IANA names only (`UTC`, `Europe/Berlin`; case-insensitive), not offsets. */
export function timezoneProblem(timezone: string): string | null {
  const hint = 'must be an IANA time zone name, e.g. "UTC" or "Europe/Berlin"';
  // Newer engines accept offset zones such as "+01:00"; those are not IANA names and ignore DST.
  if (timezone === '' || /^[+-]/.test(timezone)) return hint;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return null;
  } catch {
    return `${hint}; "${timezone}" is not one`;
  }
}

/**
 * Throws VALIDATION_FAILED when the expression or the time zone is unusable, with one detail per
 * bad field (`/cron_expression`, `/cron_timezone`) giving the reason.
 */
export function validateCron(expression: string, timezone: string): void {
  const details: ErrorDetail[] = [];
  const zone = timezoneProblem(timezone);
  if (zone) details.push({ field: '/cron_timezone', message: `cron_timezone ${zone}` });
  const pattern = expressionProblem(expression, zone ? 'UTC' : timezone);
  if (pattern) details.push({ field: '/cron_expression', message: `cron_expression ${pattern}` });
  if (details.length > 0) throw new AppError('VALIDATION_FAILED', details.map((d) => d.message).join('; '), { details });
}

/** Throws VALIDATION_FAILED (`/cron_timezone`) when the time zone is unusable; for loops without a cron, whose zone waits for one. */
export function validateTimezone(timezone: string): void {
  const zone = timezoneProblem(timezone);
  if (zone) throw new AppError('VALIDATION_FAILED', `cron_timezone ${zone}`, { details: [{ field: '/cron_timezone', message: `cron_timezone ${zone}` }] });
}

/** The first slot strictly after `after` (epoch ms), or null if the schedule never fires again. */
export function nextRunAt(expression: string, timezone: string, after: number): number | null {
  return schedule(expression, timezone).nextRun(new Date(after))?.getTime() ?? null;
}

/**
 * The most recent slot in (notBefore, now], or null. After downtime only this slot may fire
 * (docs/api.md "Firing after downtime"). Croner searches backwards field by field (months, days, hours, minutes),
 * not minute by minute, so this is cheap however long the gap is; it gives up beyond 400 years.
 */
export function latestSlotAtOrBefore(expression: string, timezone: string, now: number, notBefore: number): number | null {
  if (now <= notBefore) return null;
  // previousRuns(1, ref) returns the latest slot strictly before ref; slots are whole minutes, so ref = now + 1 ms.
  const [latest] = schedule(expression, timezone).previousRuns(1, new Date(now + 1));
  const at = latest?.getTime();
  return at !== undefined && at > notBefore && at <= now ? at : null;
}
