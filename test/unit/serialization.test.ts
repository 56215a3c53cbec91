import { describe, expect, it } from 'vitest';
import { buildSerializer } from '../../src/api/serialization.ts';

const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });

describe('buildSerializer: response serializers compiled once per distinct schema', () => {
  it('gives schemas of the same content, in other apps, the same compiled serializer', () => {
    const schema = () => ({ type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } } });
    const shared = () => ({ Thing: { $id: 'Thing', type: 'object', properties: { a: { type: 'string' } } } });
    const first = buildSerializer(shared())(route(schema()));
    const second = buildSerializer(shared())(route(schema()));
    expect(second).toBe(first);
    expect(first({ name: 'x', n: 2, extra: true })).toBe('{"name":"x","n":2}');
  });

  it('compiles again when the schema, the shared schemas it refers to, or the options differ', () => {
    const schema = { type: 'object', properties: { thing: { $ref: 'Thing#' } } };
    const withA = buildSerializer({ Thing: { $id: 'Thing', type: 'object', properties: { a: { type: 'string' } } } })(route(schema));
    const withB = buildSerializer({ Thing: { $id: 'Thing', type: 'object', properties: { b: { type: 'string' } } } })(route(schema));
    expect(withB).not.toBe(withA);
    expect(withA({ thing: { a: '1', b: '2' } })).toBe('{"thing":{"a":"1"}}');
    expect(withB({ thing: { a: '1', b: '2' } })).toBe('{"thing":{"b":"2"}}');
    const other = buildSerializer({})(route({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }));
    expect(other).not.toBe(buildSerializer({})(route({ type: 'object', properties: { name: { type: 'string' } } })));
    const rounded = buildSerializer({}, { rounding: 'ceil' })(route({ type: 'integer' }));
    expect(rounded(1.2)).toBe('2');
    expect(buildSerializer({}, { rounding: 'floor' })(route({ type: 'integer' }))(1.8)).toBe('1');
  });

  it('does not take a shared schema for its own reference (as Fastify’s default does not)', () => {
    const Thing = { $id: 'Thing', type: 'object', properties: { a: { type: 'string' } } };
    const serialize = buildSerializer({ Thing })(route(Thing));
    expect(serialize({ a: 'x', b: 'y' })).toBe('{"a":"x"}');
  });
});
