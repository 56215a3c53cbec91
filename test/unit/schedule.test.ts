import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { latestSlotAtOrBefore, nextRunAt, validateCron } from '../../src/domain/loops/schedule.ts';
import { AppError } from '../../src/errors.ts';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const MINUTE = 60_000;

function rejection(expression: string, timezone = 'UTC'): AppError {
  try {
    validateCron(expression, timezone);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} in ${timezone} to be rejected`);
}

/** The slots in (from, to], walking nextRunAt. */
function slots(expression: string, timezone: string, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = nextRunAt(expression, timezone, from); t !== null && t <= to; t = nextRunAt(expression, timezone, t)) out.push(t);
  return out;
}

describe('validateCron', () => {
  it('accepts five fields with lists, ranges, steps and names', () => {
    for (const expression of [
      '* * * * *',
      '0 9 * * MON-FRI',
      '*/15 * * * *',
      '0-30/10 8-18 * * *',
      '0 0 1,15 * *',
      '30 4 1 JAN,jul *',
      '0 12 * * sun',
      '0 0 * * 7',
      '  5   4 * * *  ',
      '0\t0\t*\t*\t*',
      '0 0 29 2 *',
      '0 0 L * *',
      '0 0 * * MON#2',
      '0 0 ? * *',
    ]) {
      expect(() => validateCron(expression, 'UTC'), expression).not.toThrow();
    }
  });

  it('rejects six- and seven-field expressions, naming the field count', () => {
    const six = rejection('0 0 9 * * *');
    expect(six.code).toBe('VALIDATION_FAILED');
    expect(six.status).toBe(400);
    expect(six.extra.details).toEqual([{ field: '/cron_expression', message: six.message }]);
    expect(six.message).toMatch(/^cron_expression must have exactly five fields .*got 6 \(a seconds field is not supported\)$/);
    expect(rejection('0 0 9 * * * 2030').message).toMatch(/got 7/);
    expect(rejection('* * * *').message).toMatch(/got 4$/);
    expect(rejection('').message).toMatch(/must not be empty/);
    expect(rejection('   ').message).toMatch(/must not be empty/);
  });

  it('rejects nicknames, suggesting the five-field form', () => {
    expect(rejection('@hourly').message).toBe('cron_expression nicknames such as @hourly are not supported; write the five fields instead ("0 * * * *")');
    expect(rejection('@Daily').message).toMatch(/"0 0 \* \* \*"/);
    expect(rejection('@reboot').message).toMatch(/not supported/);
  });

  it('rejects malformed fields with croner’s reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['60 * * * *', /Invalid value for minute: 60/],
      ['0 24 * * *', /Invalid value for hour: 24/],
      ['0 0 32 * *', /Invalid value for day/],
      ['0 0 * 13 *', /Invalid value for month/],
      ['0 0 * * 8', /Invalid value for dayOfWeek: 8/],
      ['x * * * *', /illegal characters/],
      ['*/0 * * * *', /illegal stepping: 0/],
      ['5-1 * * * *', /From value is larger than to value/],
      ['5/15 * * * *', /numeric prefix/],
      ['0 0 * FOO *', /illegal characters/],
    ];
    for (const [expression, reason] of cases) {
      const error = rejection(expression);
      expect(error.message, expression).toMatch(/^cron_expression is not a valid cron expression: /);
      expect(error.message, expression).toMatch(reason);
      expect(error.message, expression).not.toMatch(/CronPattern:/);
    }
  });

  it('rejects expressions that match no date', () => {
    for (const expression of ['0 0 30 2 *', '0 0 31 4 *', '0 0 31 2 +MON']) {
      expect(rejection(expression).message, expression).toMatch(/never fires/);
    }
    expect(() => validateCron('0 0 29 2 +MON', 'UTC')).not.toThrow(); // rare, but it happens (2016-02-29)
  });

  it('accepts IANA time zones and rejects anything else', () => {
    for (const timezone of ['UTC', 'Etc/UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'US/Eastern', 'Etc/GMT+5']) {
      expect(() => validateCron('0 9 * * *', timezone), timezone).not.toThrow();
    }
    for (const timezone of ['', 'Mars/Olympus', 'GMT+1', '+01:00', '-05:00', 'UTC ', 'Europe/Berlin\n', 'local']) {
      const error = rejection('0 9 * * *', timezone);
      expect(error.extra.details, JSON.stringify(timezone)).toEqual([{ field: '/cron_timezone', message: error.message }]);
      expect(error.message).toMatch(/^cron_timezone must be an IANA time zone name/);
    }
  });

  it('reports both fields when both are wrong', () => {
    const error = rejection('0 0 9 * * *', 'Nowhere/Special');
    expect(error.extra.details?.map((d) => d.field)).toEqual(['/cron_timezone', '/cron_expression']);
    expect(error.message).toContain('; cron_expression must have exactly five fields');
  });
});

describe('nextRunAt', () => {
  it('returns the next slot strictly after the given instant, on a whole minute', () => {
    const slot = at('2026-01-01T00:05:00.000Z');
    expect(iso(nextRunAt('*/5 * * * *', 'UTC', slot))).toBe('2026-01-01T00:10:00.000Z');
    expect(iso(nextRunAt('*/5 * * * *', 'UTC', slot - 1))).toBe('2026-01-01T00:05:00.000Z');
    expect(iso(nextRunAt('*/5 * * * *', 'UTC', slot + 1))).toBe('2026-01-01T00:10:00.000Z');
    expect(iso(nextRunAt('* * * * *', 'UTC', at('2026-01-01T00:00:59.999Z')))).toBe('2026-01-01T00:01:00.000Z');
    expect(iso(nextRunAt('* * * * *', 'UTC', at('2026-01-01T00:00:00.000Z')))).toBe('2026-01-01T00:01:00.000Z');
  });

  it('evaluates in the loop’s time zone', () => {
    const after = at('2026-01-15T00:00:00Z');
    expect(iso(nextRunAt('0 9 * * *', 'Europe/Berlin', after))).toBe('2026-01-15T08:00:00.000Z');
    expect(iso(nextRunAt('0 9 * * *', 'Asia/Kolkata', after))).toBe('2026-01-15T03:30:00.000Z');
    expect(iso(nextRunAt('0 9 * * *', 'America/New_York', after))).toBe('2026-01-15T14:00:00.000Z');
  });

  it('understands names, lists, ranges and steps', () => {
    // 2026-01-02 is a Friday.
    expect(iso(nextRunAt('0 9 * * MON-FRI', 'UTC', at('2026-01-02T10:00:00Z')))).toBe('2026-01-05T09:00:00.000Z');
    expect(iso(nextRunAt('30 4 1 JUL *', 'UTC', at('2026-01-02T10:00:00Z')))).toBe('2026-07-01T04:30:00.000Z');
    expect(slots('0-30/10 8,20 * * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-01-01T23:59:00Z')).map(iso)).toEqual([
      '2026-01-01T08:00:00.000Z',
      '2026-01-01T08:10:00.000Z',
      '2026-01-01T08:20:00.000Z',
      '2026-01-01T08:30:00.000Z',
      '2026-01-01T20:00:00.000Z',
      '2026-01-01T20:10:00.000Z',
      '2026-01-01T20:20:00.000Z',
      '2026-01-01T20:30:00.000Z',
    ]);
    expect(iso(nextRunAt('0 0 * * 7', 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2026-01-04T00:00:00.000Z'); // 7 = Sunday
  });

  it('ORs day-of-month and day-of-week when both are restricted (classic cron)', () => {
    // January 2026: the 1st is a Thursday; Mondays are the 5th, 12th, 19th, 26th.
    const days = slots('0 9 13 * MON', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-02-01T00:00:00Z')).map((t) => new Date(t).getUTCDate());
    expect(days).toEqual([5, 12, 13, 19, 26]);
    // Only one restricted: that one alone decides.
    expect(slots('0 9 13 * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-02-01T00:00:00Z')).map((t) => new Date(t).getUTCDate())).toEqual([13]);
    expect(slots('0 9 * * MON', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-02-01T00:00:00Z')).map((t) => new Date(t).getUTCDate())).toEqual([5, 12, 19, 26]);
    // A step in day-of-month is a restriction too: odd days OR Mondays.
    expect(slots('0 9 */10 * MON', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-02-01T00:00:00Z')).map((t) => new Date(t).getUTCDate())).toEqual([
      1, 5, 11, 12, 19, 21, 26, 31,
    ]);
    // A leading + in day-of-week asks for AND: the 13th only when it is a Monday (April 2026).
    expect(iso(nextRunAt('0 9 13 * +MON', 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2026-04-13T09:00:00.000Z');
  });

  it('handles rare dates', () => {
    expect(iso(nextRunAt('0 0 29 2 *', 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(nextRunAt('0 0 L 2 *', 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2026-02-28T00:00:00.000Z');
    expect(nextRunAt('0 0 30 2 *', 'UTC', at('2026-01-01T00:00:00Z'))).toBeNull();
  });

  describe('daylight saving time (America/New_York)', () => {
    const NY = 'America/New_York';

    it('spring forward: a fixed time inside the gap fires once, at the end of the gap', () => {
      // 2026-03-08 02:00 EST jumps to 03:00 EDT; 02:00 does not exist that day.
      expect(slots('0 2 * * *', NY, at('2026-03-06T12:00:00Z'), at('2026-03-10T12:00:00Z')).map(iso)).toEqual([
        '2026-03-07T07:00:00.000Z', // 02:00 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT, the first valid time after the gap
        '2026-03-09T06:00:00.000Z', // 02:00 EDT
        '2026-03-10T06:00:00.000Z',
      ]);
      expect(slots('30 2,14 * * *', NY, at('2026-03-08T00:00:00Z'), at('2026-03-08T23:59:00Z')).map(iso)).toEqual([
        '2026-03-08T07:00:00.000Z',
        '2026-03-08T18:30:00.000Z',
      ]);
    });

    it('spring forward: interval schedules skip the missing hour', () => {
      expect(slots('*/30 2 * * *', NY, at('2026-03-07T12:00:00Z'), at('2026-03-09T12:00:00Z')).map(iso)).toEqual([
        '2026-03-09T06:00:00.000Z',
        '2026-03-09T06:30:00.000Z',
      ]);
      const hourly = slots('0 * * * *', NY, at('2026-03-08T05:30:00Z'), at('2026-03-08T08:30:00Z')).map(iso);
      expect(hourly).toEqual(['2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-08T08:00:00.000Z']); // 01:00 EST, 03:00 EDT, 04:00 EDT
    });

    it('fall back: a fixed time in the repeated hour fires once, at its first occurrence', () => {
      // 2026-11-01 02:00 EDT falls back to 01:00 EST; 01:30 happens twice (05:30Z and 06:30Z).
      expect(slots('30 1 * * *', NY, at('2026-10-31T12:00:00Z'), at('2026-11-02T12:00:00Z')).map(iso)).toEqual([
        '2026-11-01T05:30:00.000Z',
        '2026-11-02T06:30:00.000Z',
      ]);
      expect(slots('30 1,13 * * *', NY, at('2026-11-01T00:00:00Z'), at('2026-11-01T23:59:00Z')).map(iso)).toEqual([
        '2026-11-01T05:30:00.000Z',
        '2026-11-01T18:30:00.000Z',
      ]);
    });

    it('fall back: interval schedules run through both occurrences of the hour', () => {
      expect(slots('*/30 1 * * *', NY, at('2026-11-01T00:00:00Z'), at('2026-11-01T12:00:00Z')).map(iso)).toEqual([
        '2026-11-01T05:00:00.000Z',
        '2026-11-01T05:30:00.000Z',
        '2026-11-01T06:00:00.000Z',
        '2026-11-01T06:30:00.000Z',
      ]);
    });
  });
});

describe('latestSlotAtOrBefore', () => {
  it('returns the latest slot in (notBefore, now]', () => {
    const now = at('2026-01-01T10:07:30Z');
    expect(iso(latestSlotAtOrBefore('*/5 * * * *', 'UTC', now, at('2026-01-01T09:00:00Z')))).toBe('2026-01-01T10:05:00.000Z');
    expect(iso(latestSlotAtOrBefore('0 * * * *', 'UTC', now, at('2026-01-01T09:00:00Z')))).toBe('2026-01-01T10:00:00.000Z');
  });

  it('includes a slot equal to now and excludes one equal to notBefore', () => {
    const slot = at('2026-01-01T10:05:00Z');
    expect(latestSlotAtOrBefore('*/5 * * * *', 'UTC', slot, slot - MINUTE)).toBe(slot);
    expect(latestSlotAtOrBefore('*/5 * * * *', 'UTC', slot + 4 * MINUTE, slot)).toBeNull();
    expect(latestSlotAtOrBefore('*/5 * * * *', 'UTC', slot - 1, slot - 2 * MINUTE)).toBeNull();
    expect(latestSlotAtOrBefore('*/5 * * * *', 'UTC', slot, slot)).toBeNull();
    expect(latestSlotAtOrBefore('*/5 * * * *', 'UTC', slot - MINUTE, slot)).toBeNull();
  });

  it('after long downtime, returns only the most recent missed slot, quickly', () => {
    const started = performance.now();
    expect(iso(latestSlotAtOrBefore('* * * * *', 'UTC', at('2026-06-01T12:34:56Z'), at('2016-01-01T00:00:00Z')))).toBe('2026-06-01T12:34:00.000Z');
    expect(iso(latestSlotAtOrBefore('0 0 29 2 *', 'UTC', at('2026-06-01T00:00:00Z'), at('2000-01-01T00:00:00Z')))).toBe('2024-02-29T00:00:00.000Z');
    expect(latestSlotAtOrBefore('0 0 29 2 *', 'UTC', at('2026-06-01T00:00:00Z'), at('2024-03-01T00:00:00Z'))).toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('uses the time zone and DST rules of nextRunAt', () => {
    const NY = 'America/New_York';
    expect(iso(latestSlotAtOrBefore('0 2 * * *', NY, at('2026-03-08T12:00:00Z'), at('2026-03-01T00:00:00Z')))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(latestSlotAtOrBefore('30 1 * * *', NY, at('2026-11-01T12:00:00Z'), at('2026-10-01T00:00:00Z')))).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(latestSlotAtOrBefore('*/30 1 * * *', NY, at('2026-11-01T12:00:00Z'), at('2026-10-01T00:00:00Z')))).toBe('2026-11-01T06:30:00.000Z');
  });

  it('agrees with walking nextRunAt, DST changes included', () => {
    const expressions = ['*/7 * * * *', '0 * * * *', '30 1 * * *', '0 2 * * *', '*/20 1,2 * * *', '0 9 13 * MON', '15 3 * * SUN', '0 0 L * *', '45 23 * * 1-5'];
    const timezones = ['UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Asia/Kolkata'];
    // Windows around the 2026 DST changes of these zones, and ordinary days.
    const centres = ['2026-03-08T07:00:00Z', '2026-03-29T01:00:00Z', '2026-04-04T15:00:00Z', '2026-10-03T16:00:00Z', '2026-10-25T01:00:00Z', '2026-11-01T06:00:00Z', '2026-06-15T12:00:00Z'].map(at);
    fc.assert(
      fc.property(
        fc.constantFrom(...expressions),
        fc.constantFrom(...timezones),
        fc.constantFrom(...centres),
        fc.integer({ min: -36 * 60 * MINUTE, max: 36 * 60 * MINUTE }),
        fc.integer({ min: 0, max: 3 * 24 * 60 * MINUTE }),
        (expression, timezone, centre, offset, width) => {
          const now = centre + offset;
          const notBefore = now - width;
          const walked = slots(expression, timezone, notBefore, now);
          expect(latestSlotAtOrBefore(expression, timezone, now, notBefore)).toBe(walked.length > 0 ? walked[walked.length - 1] : null);
        },
      ),
      { numRuns: 150 },
    );
  });
});
