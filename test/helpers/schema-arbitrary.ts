/**
 * Values for a JSON Schema (the subset the OpenAPI document uses), as fast-check arbitraries: the
 * valid inputs of the conformance test (test/api/openapi-conformance.test.ts). Strings are drawn
 * from all of Unicode but U+0000 (or from their pattern), integers near their bounds as well as in
 * the middle, objects with and without their optional properties.
 *
 * `hint` lets the caller draw a named property from values that exist (a repository id, a ticket
 * slug): the schema cannot say which ids exist, and without it almost every create would be a 400.
 */
import fc from 'fast-check';

export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  minProperties?: number;
};

export interface SchemaContext {
  /** Resolves `#/components/...` in the document. */
  resolve(ref: string): Schema;
  /** Values that exist for a property of this name, if the caller knows some. */
  hint?(name: string, schema: Schema): fc.Arbitrary<unknown> | undefined;
}

/** Generated strings stay short: the test is about shapes and bounds, not megabytes. */
const LONGEST = 80;
const NO_NUL = '^[^\\u0000]*$';
const MAX_INT32 = 0x7fffffff;

export function deref(schema: Schema, ctx: SchemaContext): Schema {
  let current = schema;
  for (let i = 0; current.$ref && i < 20; i++) current = ctx.resolve(current.$ref);
  return current;
}

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

/** Any text of `min`..`max` code points without U+0000, all planes included. */
export function text(min = 0, max = LONGEST): fc.Arbitrary<string> {
  const upper = Math.max(min, Math.min(max, LONGEST));
  const arb = fc.oneof(
    fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: upper }),
    fc.string({ unit: 'binary', minLength: min, maxLength: upper }),
  );
  return arb.map((s) => s.replaceAll('\u0000', 'x'));
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 10_000;
  const fits = (s: string) => [...s].length >= min && [...s].length <= max;
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  if (schema.format === 'email') return fc.emailAddress().filter((s) => fits(s) && !s.includes('\u0000'));
  if (schema.pattern && schema.pattern !== NO_NUL) {
    const pattern = new RegExp(schema.pattern, 'u');
    return fc.stringMatching(pattern).filter(fits);
  }
  const arbitraries = [text(min, max)];
  // The longest value allowed, where that is cheap to send.
  if (max <= 1_000) arbitraries.push(fc.constant('m'.repeat(Math.max(min, max))));
  return fc.oneof(...arbitraries);
}

function integerArbitrary(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  const near = fc.integer({ min, max: Math.min(max, Math.max(min, Math.min(MAX_INT32, min + 1_000))) });
  const bounds = fc.constantFrom(min, max);
  return fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: bounds });
}

function objectArbitrary(schema: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) model[name] = valueFor(property, ctx, depth + 1, name);
  let arb: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: [...required].filter((n) => n in model) }) as fc.Arbitrary<Record<string, unknown>>;
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object') {
    const names = schema.propertyNames ? stringArbitrary(schema.propertyNames).filter((n) => !(n in properties)) : text(1, 20);
    const entries = fc.dictionary(names, valueFor(extra, ctx, depth + 1), { maxKeys: depth > 2 ? 0 : 3 });
    arb = fc.tuple(arb, entries).map(([known, more]) => ({ ...more, ...known }));
  }
  const forbidden = schema.not?.required;
  if (forbidden) {
    const typed = schema.not!.properties as Record<string, Schema> | undefined;
    const violates = (value: Record<string, unknown>) =>
      forbidden.every((n) => n in value && (!typed?.[n] || typesOf(typed[n]).includes(typeof value[n] === 'number' ? 'number' : value[n] === null ? 'null' : typeof value[n])));
    arb = arb.filter((value) => !violates(value));
  }
  const least = schema.minProperties;
  if (least) arb = arb.filter((value) => Object.keys(value).length >= least);
  return arb;
}

/**
 * Valid values of `schema`. `name` is the property (or parameter) it is the value of, for hints;
 * `depth` bounds recursive schemas (JsonValue).
 */
export function valueFor(schema: Schema, ctx: SchemaContext, depth = 0, name?: string): fc.Arbitrary<unknown> {
  const hinted = name === undefined ? undefined : ctx.hint?.(name, schema);
  const generic = genericValue(schema, ctx, depth);
  if (!hinted) return generic;
  // Mostly values that exist; sometimes any valid value, which the server may refuse for a reason
  // the schema cannot state (the test knows those fields).
  return fc.oneof({ weight: 5, arbitrary: hinted }, { weight: 1, arbitrary: generic });
}

function genericValue(input: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  const schema = deref(input, ctx);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    // Deep down a recursive schema, only the branches that end the recursion.
    const usable = depth > 3 ? branches.filter((b) => !JSON.stringify(b).includes('$ref')) : branches;
    return fc.oneof(...usable.map((b) => genericValue(b, ctx, depth + 1)));
  }
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => genericValue({ ...schema, type }, ctx, depth)));
  switch (types[0]) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return integerArbitrary(schema);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = schema.items ? valueFor(schema.items, ctx, depth + 1) : fc.constant(null);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(items, constraints);
    }
    case 'object':
      return objectArbitrary(schema, ctx, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v).replaceAll('\\u0000', 'x')));
  }
}
