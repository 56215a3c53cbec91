import { describe, expect, it } from 'vitest';
import { isOtherSchemaGone } from '../../src/store/migrate.ts';

describe('migrations retry when another schema vanishes while Kysely lists the tables', () => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('retries a missing schema or table that is not in the store’s own schema', () => {
    expect(isOtherSchemaGone(pgError('3F000', 'schema "t_0123456789ab" does not exist'), 't_aaaaaaaaaaaa')).toBe(true);
    expect(isOtherSchemaGone(pgError('42P01', 'relation "t_0123456789ab.pods" does not exist'), 't_aaaaaaaaaaaa')).toBe(true);
  });

  it('does not retry what concerns its own schema, other errors, or SQLite', () => {
    expect(isOtherSchemaGone(pgError('3F000', 'schema "t_aaaaaaaaaaaa" does not exist'), 't_aaaaaaaaaaaa')).toBe(false);
    expect(isOtherSchemaGone(pgError('42P01', 'relation "t_aaaaaaaaaaaa.pods" does not exist'), 't_aaaaaaaaaaaa')).toBe(false);
    expect(isOtherSchemaGone(pgError('42703', 'column "x" does not exist'), 't_aaaaaaaaaaaa')).toBe(false);
    expect(isOtherSchemaGone(pgError('3F000', 'schema "t_0123456789ab" does not exist'), undefined)).toBe(false);
  });
});
