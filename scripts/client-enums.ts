// The enumerations of the API's inputs as values (src/client/enums.ts), generated from the OpenAPI
// document next to the client's types: the CLI checks its options against these, so its lists
// cannot drift from what the API takes. `npm run client` writes them; a test checks they are current.
import fs from 'node:fs';

export const CLIENT_ENUMS_FILE = new URL('../src/client/enums.ts', import.meta.url);

const HEADER = `// Generated from the OpenAPI document by \`npm run client\`: do not edit.
// The values each operation's query parameters and request body fields take, by operationId.
// A test fails when the document changes and this file is not regenerated.
`;

interface SchemaLike {
  enum?: unknown[];
  anyOf?: SchemaLike[];
  oneOf?: SchemaLike[];
  properties?: Record<string, SchemaLike>;
}

/** The string values of an enum schema, also when it is nullable (anyOf: [enum, null]). */
function enumValues(schema: SchemaLike | undefined): string[] | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return schema.enum as string[];
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const values = enumValues(branch);
    if (values) return values;
  }
  return undefined;
}

interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string; schema?: SchemaLike }[];
  requestBody?: { content?: Record<string, { schema?: SchemaLike }> };
}

/** `{ operationId: { field: values } }` for every operation with an enumerated input. */
export function inputEnums(document: unknown): Record<string, Record<string, string[]>> {
  const result: Record<string, Record<string, string[]>> = {};
  const paths = (document as { paths: Record<string, Record<string, Operation>> }).paths;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (!operation?.operationId) continue;
      const fields: Record<string, string[]> = {};
      for (const parameter of operation.parameters ?? []) {
        const values = parameter.in === 'query' ? enumValues(parameter.schema) : undefined;
        if (values) fields[parameter.name] = values;
      }
      const body = operation.requestBody?.content?.['application/json']?.schema;
      for (const [name, schema] of Object.entries(body?.properties ?? {})) {
        const values = enumValues(schema);
        if (values) fields[name] ??= values;
      }
      if (Object.keys(fields).length > 0) result[operation.operationId] = fields;
    }
  }
  return Object.fromEntries(Object.entries(result).sort(([a], [b]) => a.localeCompare(b)));
}

export function clientEnums(document: unknown): string {
  return `${HEADER}export const INPUT_ENUMS = ${JSON.stringify(inputEnums(document), null, 2)} as const;\n`;
}

/** null when the committed enums are those of `document`, else why not. */
export function enumsDrift(document: unknown, file: URL = CLIENT_ENUMS_FILE): string | null {
  if (!fs.existsSync(file)) return `${file.pathname} is missing`;
  return fs.readFileSync(file, 'utf8') === clientEnums(document) ? null : `${file.pathname} differs from the document: run \`npm run client\``;
}
