import fastJsonStringify, { type Options, type Schema } from 'fast-json-stringify';

type Serializer = (data: unknown) => string;
type Schemas = Record<string, unknown>;

/**
 * Compiled serializers by what they were compiled from, as JSON: the response schema, the shared
 * schemas it may refer to and the options. (Fastify clones the shared schemas for each app, and
 * routes build their error responses afresh, so the objects differ where the content does not.)
 */
const compiled = new Map<string, Serializer>();
/** Each distinct set of shared schemas and options, numbered (they are long, and the same for every schema). */
const againstIds = new Map<string, number>();
const againstId = (externals: Schemas, options: string): number => {
  const text = JSON.stringify([externals, options]);
  let id = againstIds.get(text);
  if (id === undefined) againstIds.set(text, (id = againstIds.size));
  return id;
};

const compile = (schema: unknown, externals: Schemas, options: Options): Serializer =>
  fastJsonStringify(schema as Schema, { ...options, schema: externals as Record<string, Schema> }) as Serializer;

/**
 * Fastify's response serializer factory (`schemaController.compilersFactory.buildSerializer`),
 * doing what its default does (fast-json-stringify against the app's shared schemas) but
 * compiling each distinct response schema once per process rather than once per route of every
 * app: that compiling was about 0.6 s of each app's start, and tests and replicas start many apps
 * in one process.
 */
export function buildSerializer(externalSchemas: unknown = {}, serializerOptions: Options = {}) {
  const all = (externalSchemas ?? {}) as Schemas;
  const options = JSON.stringify(serializerOptions);
  const againstAll = againstId(all, options);
  return ({ schema }: { schema?: unknown }): Serializer => {
    // As the default does: a schema is not its own external schema.
    const id = (schema as { $id?: string } | null)?.$id;
    let externals = all;
    let against = againstAll;
    if (id !== undefined && id in externals) {
      externals = { ...externals };
      delete externals[id];
      against = againstId(externals, options);
    }
    const key = `${against} ${JSON.stringify(schema)}`;
    let serialize = compiled.get(key);
    if (!serialize) compiled.set(key, (serialize = compile(schema, externals, serializerOptions)));
    return serialize;
  };
}
