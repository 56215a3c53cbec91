import { Type, type Static, type TSchema, type TStringOptions } from 'typebox';
import { ERROR_STATUS } from '../../errors.ts';
import { ACTOR_TYPES } from '../../protocol/enums.ts';

/** `T | null` as one JSON-schema type list, so errors read "must be an integer or null". */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/**
 * U+0000 is refused in every string a request carries (the JSON body parser and the URL check
 * refuse it before any schema runs: no PostgreSQL text column can hold it). Every request string
 * states it as a pattern, so the document says what the server does; a schema with a pattern of
 * its own writes NUL out of that pattern instead.
 */
export const NO_NUL = '^[^\\u0000]*$';
/** Not blank (some character other than whitespace), and no U+0000. */
export const NOT_BLANK = '^\\s*[^\\s\\u0000][^\\u0000]*$';

/**
 * How a `pattern` failure is worded, by pattern: a regular expression is no message for a person.
 * A function gets the refused value (the schemas of domain rules explain with the domain's words).
 */
export const PATTERN_MESSAGES = new Map<string, string | ((value: unknown) => string)>([
  [NO_NUL, 'may not contain the character U+0000'],
  [NOT_BLANK, 'must not be blank'],
]);

/** A pattern with the words that explain a value it refuses. */
export function explainedPattern(pattern: string, message: string | ((value: unknown) => string)): string {
  PATTERN_MESSAGES.set(pattern, message);
  return pattern;
}

/** A request string: U+0000 refused (see NO_NUL). */
export const Text = (options: TStringOptions = {}) => Type.String({ pattern: NO_NUL, ...options });
/** A request string that must not be blank. */
export const NonBlank = (options: TStringOptions = {}) => Type.String({ minLength: 1, pattern: NOT_BLANK, ...options });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/**
 * Any JSON value, recursively, whose strings and keys hold no U+0000: template values
 * (`prompt_variables`, trigger `variables`). Shared (by `$id`) with the validator and the document.
 */
export const JsonValue = Type.Unsafe<unknown>({
  $id: 'JsonValue',
  title: 'JSON value',
  description: 'Any JSON value; its strings and object keys may not contain U+0000.',
  anyOf: [
    { type: 'string', pattern: NO_NUL },
    { type: ['number', 'boolean', 'null'] },
    { type: 'array', items: { $ref: 'JsonValue' } },
    { type: 'object', propertyNames: { pattern: NO_NUL }, additionalProperties: { $ref: 'JsonValue' } },
  ],
});

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'A human sentence' }),
    code: Type.Enum(Object.keys(ERROR_STATUS)),
    request_id: Type.String({ description: 'Also sent as the X-Request-Id header; the server log names it' }),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'validation errors: the field (JSON pointer in a body, name of a parameter) and why' })),
    required_scopes: Type.Optional(Type.Array(Type.String(), { description: 'on 403 INSUFFICIENT_SCOPE' })),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const MessageBody = Type.Object({ message: Type.String() });

/** What each error status means, as the document's response descriptions. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_FAILED or INVALID_JSON: the query, path, headers or body are invalid (`details` names the fields)',
  401: 'AUTH_REQUIRED or INVALID_API_KEY: no key, or an unknown, expired or revoked one',
  403: 'INSUFFICIENT_SCOPE: the key lacks the scope (`required_scopes`)',
  404: 'NOT_FOUND: the organization, or the addressed resource in it, does not exist',
  409: 'A state conflict (the code says which)',
  413: 'PAYLOAD_TOO_LARGE: the body is larger than 1 MiB',
  415: 'UNSUPPORTED_MEDIA_TYPE: a body not sent as application/json',
  429: 'RATE_LIMITED: too many requests for this key; QUOTA_EXCEEDED: an organization quota (the message names it); TOO_MANY_STREAMS (event and output streams): the key or pod token already holds 20 open streams, or its organization 500; retry after Retry-After seconds',
  500: 'INTERNAL: an unexpected failure; the request id identifies it in the server log',
  502: 'PROVIDER_ERROR: the Git provider failed or timed out',
  503: 'NO_AVAILABLE_RUNNER: no runner of the organization offers the agent',
};

/** The error statuses every route can answer with, plus the route's own (409, 502, 503). */
export function errorResponses(...extra: number[]) {
  const statuses = [400, 401, 403, 404, 413, 415, 429, 500, ...extra];
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody', { description: ERROR_DESCRIPTIONS[s] })]));
}

export const OrgSlugParam = Text({ maxLength: 64, description: "the organization's slug" });
export const OrgParams = Type.Object({ org: OrgSlugParam });

/** `Idempotency-Key` on creating POSTs (docs/api.md); validated here, honoured by the idempotency plugin. */
export const VISIBLE_ASCII = explainedPattern('^[\\x21-\\x7e]+$', 'must be visible ASCII characters (no spaces)');
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: VISIBLE_ASCII,
      description:
        'Makes the request safe to retry for 24 h (per API key): the same key with the same body replays the first response; ' +
        'with another body it is 409 IDEMPOTENCY_MISMATCH, and while the first is in flight 409 IDEMPOTENCY_IN_PROGRESS.',
    }),
  ),
});

/** A route without query parameters refuses any (a typo must not be silently ignored). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

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

/** Who made a change (docs/api.md "Actors and activity"). */
export const Actor = Type.Object(
  {
    type: Type.Enum(ACTOR_TYPES, {
      description: 'user: a person (through a key of theirs); api_key: a key of no one; pod: a pod (its token); loop: a loop (its schedule); admin: the admin token; system: the server itself',
    }),
    id: Type.Union([Type.Integer(), Type.String(), Type.Null()], { description: "the user's or key's id, the pod's key, the loop's slug; null for admin and system" }),
    name: Type.String({ description: 'the name at the time of the change' }),
  },
  { additionalProperties: false },
);
/** An actor column: null on what was written before actors were recorded. */
export const ActorOrNull = Nullable(Actor);

/** Placement by labels (docs/runners.md): only runners carrying every one qualify. */
export const RunnerLabels = Type.Array(Text({ minLength: 1, maxLength: 100 }), {
  maxItems: 20,
  uniqueItems: true,
  description: 'only runners carrying all of these labels run it; none carrying them with the agent: 503',
});
/** A preset's name (GET /presets): its agent and agentfile lines, this one's own lines on top. */
export const PresetName = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$', description: 'a preset of the organization (lower-case letters, digits, . _ -; up to 63)' });
