// The typed client's types, generated from the OpenAPI document with openapi-typescript: used by
// `npm run client` to write them and by the drift test to check that they are current.
import fs from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

export const CLIENT_TYPES_FILE = new URL('../src/client/schema.ts', import.meta.url);

const HEADER = `// Generated from the OpenAPI document by \`npm run client\` (openapi-typescript): do not edit.
// A test fails when the document changes and this file is not regenerated.
`;

/** The TypeScript of `paths`, `components`, `operations` and `webhooks` for a document. */
export async function clientTypes(document: unknown): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], {
    // A recursive union is more than TypeScript resolves through indexed access types: template
    // values (JsonValue) are typed as unknown, which any JSON value is.
    transform: (_schema, { path }) => (path === '#/components/schemas/JsonValue' ? ts.factory.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword) : undefined),
  });
  return HEADER + astToString(ast);
}

/** null when the committed client types are those of `document`, else why not. */
export async function clientDrift(document: unknown, file: URL = CLIENT_TYPES_FILE): Promise<string | null> {
  const expected = await clientTypes(document);
  if (!fs.existsSync(file)) return `${file.pathname} is missing`;
  const committed = fs.readFileSync(file, 'utf8');
  if (committed === expected) return null;
  const a = committed.split('\n');
  const b = expected.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  return `${file.pathname} differs from the document from line ${(line < 0 ? a.length : line) + 1}: run \`npm run client\``;
}
