import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from '../errors.ts';
import { JsonValue, PATTERN_MESSAGES } from './schemas/common.ts';

/**
 * Bodies are validated exactly as sent: no type coercion (`"agent_slug": 3` is an error),
 * no silent removal of unknown fields. Query strings and path params arrive as text, so
 * they are coerced to the declared types before validation.
 */
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // Errors carry the refused value and the schema, so a pattern or a `not` is explained in words.
    verbose: true,
  });
  addFormats.default(ajv);
  // Schemas that request schemas reference by `$id`.
  ajv.addSchema(JsonValue);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * Query and path integers must be written as decimal integers: Ajv's coercion alone would also
 * take ` `, `0x10`, `1e1` or `Infinity`. The check runs on the raw text before coercion.
 */
function strictIntegers(schema: object, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integerNames = Object.entries(properties)
    .filter(([, property]) => property.type === 'integer' || (Array.isArray(property.type) && property.type.includes('integer')))
    .map(([name]) => name);
  if (integerNames.length === 0) return validate;
  const notDecimal = (data: Record<string, unknown>, name: string) => typeof data?.[name] === 'string' && !DECIMAL_INTEGER.test(data[name] as string);
  const checked = ((data: Record<string, unknown>) => {
    // A loop, not a filter: the valid case (every request of a route with such a parameter) allocates nothing.
    let anyBad = false;
    for (const name of integerNames) anyBad ||= notDecimal(data, name);
    if (anyBad) {
      const bad = integerNames.filter((name) => notDecimal(data, name));
      checked.errors = bad.map((name) => ({
        keyword: 'type',
        instancePath: '/' + name,
        schemaPath: `#/properties/${name}/type`,
        params: { type: 'integer' },
        message: 'must be integer',
      }));
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return checked;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? bodyAjv.compile(schema) : strictIntegers(schema, textAjv.compile(schema));

/** RFC 6901: `~` and `/` inside a name are written `~0` and `~1`. */
const escapePointer = (name: string): string => name.replaceAll('~', '~0').replaceAll('/', '~1');

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

/** Ajv errors → the error body's `details`: body fields as JSON pointers, query/path fields by name. */
export function validationDetails(errors: ErrorObject[], context: string): ErrorDetail[] {
  const byName = context !== 'body';
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const error of errors) {
    // anyOf/oneOf produce one error per branch plus a summary; the branches say more.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    let pointer = error.instancePath;
    let message: string;
    switch (error.keyword) {
      case 'additionalProperties':
        pointer += '/' + escapePointer(String(error.params.additionalProperty));
        message = byName ? 'is not a known parameter' : 'is not a known field';
        break;
      case 'required':
        pointer += '/' + escapePointer(String(error.params.missingProperty));
        message = 'is required';
        break;
      case 'type':
        message = `must be ${describeType(error.params.type)}`;
        break;
      case 'enum':
        message = `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
        break;
      case 'minLength':
        message = `must be at least ${error.params.limit} characters`;
        break;
      case 'maxLength':
        message = `must be at most ${error.params.limit} characters`;
        break;
      case 'minItems':
        message = `must have at least ${error.params.limit} items`;
        break;
      case 'maxItems':
        message = `must have at most ${error.params.limit} items`;
        break;
      case 'minimum':
        message = `must be at least ${error.params.limit}`;
        break;
      case 'maximum':
        message = `must be at most ${error.params.limit}`;
        break;
      case 'minProperties':
        message = error.params.limit === 1 ? 'must name at least one field to change' : `must have at least ${error.params.limit} fields`;
        break;
      case 'pattern': {
        const explain = PATTERN_MESSAGES.get(String(error.params.pattern));
        message = explain === undefined ? `must match ${error.params.pattern}` : typeof explain === 'string' ? explain : explain(error.data);
        break;
      }
      case 'not': {
        // `not: {required: [a, b]}`: fields that may not be given together; the error names the last.
        const together = (error.schema as { required?: string[] } | undefined)?.required;
        if (together && together.length > 1) {
          const last = together[together.length - 1];
          pointer += '/' + escapePointer(last);
          message = `may not be given together with ${together.slice(0, -1).join(', ')}: choose one`;
        } else {
          message = 'is invalid';
        }
        break;
      }
      default:
        message = error.message ?? 'is invalid';
    }
    const field = byName ? pointer.replace(/^\//, '') || context : pointer || '/';
    const label = byName ? field : field === '/' ? 'body' : field.slice(1).replaceAll('/', '.');
    const text = `${label} ${message}`;
    if (seen.has(field + text)) continue;
    seen.add(field + text);
    details.push({ field, message: text });
  }
  return details;
}
