import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_STATUS } from '../../errors.ts';

/** `T | null` as one JSON-schema type list, so errors read "must be an integer or null". */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'A human sentence' }),
    code: Type.Enum(Object.keys(ERROR_STATUS)),
    request_id: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    required_scopes: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const MessageBody = Type.Object({ message: Type.String() });

/** The error statuses every authenticated route can answer with. */
export function errorResponses(...extra: number[]) {
  const statuses = [400, 401, 403, 404, 413, 415, 429, ...extra];
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody')]));
}

export const OrgParams = Type.Object({ org: Type.String({ maxLength: 64 }) });

/** `limit` must be a positive integer; values above the maximum are clamped by `clampLimit`. */
export const Limit = (defaultValue: number, maximum: number) =>
  Type.Integer({ minimum: 1, default: defaultValue, description: `default ${defaultValue}, values above ${maximum} are clamped` });
export const Offset = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 });

export const clampLimit = (limit: number, maximum: number): number => Math.min(limit, maximum);

/** Query booleans: true/false/1/0. */
export const QueryBoolean = Type.Enum(['true', 'false', '1', '0']);
export const isTrue = (value: string | undefined): boolean => value === 'true' || value === '1';

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
