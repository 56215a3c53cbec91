/**
 * The invalid inputs of the conformance test: one valid request broken in one place, in every way
 * its schemas say it can be (a required field missing, an unknown field, a wrong type, a bound
 * crossed, a value outside an enum or a pattern, U+0000 in a string, fields given together that
 * may not be). The server must answer each with a 4xx and the error body.
 */
import fc from 'fast-check';
import { deref, valueFor, type Schema, type SchemaContext } from './schema-arbitrary.ts';

export interface RequestParts {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  /** undefined: no body is sent. */
  body: unknown;
  /** A raw body to send instead of JSON.stringify(body). */
  rawBody?: string;
}

export interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}

export interface Violation {
  /** What was broken, for the failure message. */
  what: string;
  apply(request: RequestParts): RequestParts;
}

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

/** Strings tried in turn until one breaks a pattern. */
const PATTERN_BREAKERS = ['', ' ', '\t\n', '-x', 'a b', 'UPPER', '@x', '+01:00', 'x'.repeat(70), 'ÿ', '*', 'a,'.repeat(30), 'a:b', '\u0001'];

const sampleOf = (arb: fc.Arbitrary<unknown>): unknown => fc.sample(arb, { numRuns: 1, seed: 42 })[0];

/** Values that break `input` in one way each, with what they break. */
export function badValues(input: Schema, ctx: SchemaContext): { what: string; value: unknown }[] {
  const schema = deref(input, ctx);
  const types = typesOf(schema);
  const out: { what: string; value: unknown }[] = [];
  const isText = types.includes('string') || (schema.enum ?? []).some((v) => typeof v === 'string');
  if (schema.enum) out.push({ what: 'a value outside the enum', value: isText ? 'zz-not-allowed' : 987654 });
  if (!isText) out.push({ what: 'a string instead', value: 'a-string' });
  else if (!types.includes('integer') && !types.includes('number')) out.push({ what: 'a number instead', value: 12345 });
  if (!types.includes('null') && !(schema.enum ?? []).includes(null) && !schema.anyOf) out.push({ what: 'null', value: null });
  if (types.includes('string') && !schema.enum) {
    const min = schema.minLength ?? 0;
    const max = schema.maxLength;
    if (max !== undefined && max <= 200_000) out.push({ what: `${max + 1} characters`, value: 'x'.repeat(max + 1) });
    if (min > 0) out.push({ what: `${min - 1} characters`, value: 'x'.repeat(min - 1) });
    if (schema.pattern) {
      const pattern = new RegExp(schema.pattern, 'u');
      const breaker = PATTERN_BREAKERS.find((s) => !pattern.test(s) && [...s].length >= min && (max === undefined || [...s].length <= max));
      if (breaker !== undefined) out.push({ what: `${JSON.stringify(breaker)} against ${schema.pattern}`, value: breaker });
    }
    out.push({ what: 'U+0000 in the string', value: 'a\u0000b' });
  }
  if (types.includes('integer')) {
    if (schema.minimum !== undefined) out.push({ what: `below ${schema.minimum}`, value: schema.minimum - 1 });
    if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) out.push({ what: `above ${schema.maximum}`, value: schema.maximum + 1 });
    out.push({ what: 'a fraction', value: 1.5 });
  }
  if (types.includes('array') && schema.items) {
    const item = sampleOf(valueFor(schema.items, ctx));
    if (schema.maxItems !== undefined) out.push({ what: `${schema.maxItems + 1} items`, value: Array.from({ length: schema.maxItems + 1 }, (_, i) => (typeof item === 'string' ? `${item}${i}` : item)) });
    for (const bad of badValues(schema.items, ctx).slice(0, 2)) out.push({ what: `an item: ${bad.what}`, value: [bad.value] });
  }
  if (types.includes('object')) out.push({ what: 'an array instead', value: [] });
  return out;
}

/** The same values written into a URL: every query and path value travels as text. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function bodyViolations(input: Schema, ctx: SchemaContext, value: unknown, pointer: string, set: (v: unknown) => RequestParts['body']): Violation[] {
  const schema = deref(input, ctx);
  if (!typesOf(schema).includes('object') || value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const object = value as Record<string, unknown>;
  const out: Violation[] = [];
  const replace = (what: string, next: Record<string, unknown>): Violation => ({ what: `${pointer || 'body'}: ${what}`, apply: (r) => ({ ...r, body: set(next) }) });
  for (const name of schema.required ?? []) {
    const { [name]: _dropped, ...rest } = object;
    out.push(replace(`without required ${name}`, rest));
  }
  if (schema.additionalProperties === false) out.push(replace('an unknown field', { ...object, zz_unknown_field: 1 }));
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    for (const bad of badValues(property, ctx)) out.push(replace(`${name} ${bad.what}`, { ...object, [name]: bad.value }));
    if (object[name] !== undefined) {
      out.push(...bodyViolations(property, ctx, object[name], `${pointer}/${name}`, (v) => set({ ...object, [name]: v })));
    }
  }
  const together = schema.not?.required;
  if (together) out.push(replace(`${together.join(' and ')} together`, { ...object, ...Object.fromEntries(together.map((n) => [n, 'shell'])) }));
  return out;
}

/** Every way to break `valid` in one place, as its operation's parameters and body schema state them. */
export function violations(parameters: Parameter[], bodySchema: Schema | undefined, ctx: SchemaContext, valid: RequestParts): Violation[] {
  const out: Violation[] = [];
  for (const parameter of parameters) {
    // Any other organization is a 404 before anything is validated (docs/api.md "Authentication").
    if (parameter.in === 'path' && parameter.name === 'org') continue;
    const where = parameter.in === 'path' ? 'path' : parameter.in === 'query' ? 'query' : 'headers';
    const put = (r: RequestParts, value: string | undefined): RequestParts => {
      const part = { ...(r[where] as Record<string, unknown>) };
      if (value === undefined) delete part[parameter.name];
      else part[parameter.name] = value;
      return { ...r, [where]: part };
    };
    // A path parameter longer than the router takes is a 400 as well; U+0000 is refused in a URL, not in a header.
    const isString = deref(parameter.schema, ctx).type === 'string';
    for (const bad of badValues(parameter.schema, ctx)) {
      // In a URL or a header every value is text: a number is a valid string there, null and objects have no form.
      if (bad.value === null || typeof bad.value === 'object' || (isString && typeof bad.value === 'number')) continue;
      // HTTP cannot carry control characters in a header at all.
      if (parameter.in === 'header' && typeof bad.value === 'string' && [...bad.value].some((c) => c.charCodeAt(0) < 0x20)) continue;
      if (parameter.in === 'path' && bad.value === '') continue; // an empty segment routes elsewhere
      out.push({ what: `${parameter.in} ${parameter.name}: ${bad.what}`, apply: (r) => put(r, textOf(bad.value)) });
    }
    if (parameter.required && parameter.in !== 'path') out.push({ what: `without ${parameter.in} ${parameter.name}`, apply: (r) => put(r, undefined) });
  }
  if (parameters.some((p) => p.in === 'query') || parameters.length > 0) {
    out.push({ what: 'an unknown query parameter', apply: (r) => ({ ...r, query: { ...r.query, zz_unknown_param: '1' } }) });
  }
  if (bodySchema) {
    out.push(...bodyViolations(bodySchema, ctx, valid.body ?? {}, '', (v) => v));
    out.push({ what: 'a body that is an array', apply: (r) => ({ ...r, body: [] }) });
    out.push({ what: 'a body that is not JSON', apply: (r) => ({ ...r, body: {}, rawBody: '{"a":' }) });
  }
  return out;
}
