/**
 * The typed client (src/client/schema.ts) is generated from the OpenAPI document: the committed
 * file must be what `npm run client` makes of the document the server serves, and the check must
 * notice a document that changed without the client being regenerated.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientDrift, clientTypes } from '../../scripts/client-types.ts';
import { openApiDocument } from '../helpers/openapi.ts';

describe('the typed client is generated from the current OpenAPI document', () => {
  it('matches the committed src/client/schema.ts (run `npm run client` after changing a schema)', async () => {
    expect(await clientDrift(await openApiDocument())).toBeNull();
  });

  it('fails when the document changes without the client being regenerated', async () => {
    const document = (await openApiDocument()) as { paths: Record<string, unknown>; components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    const changed = structuredClone(document);
    changed.components.schemas.Ticket.properties.estimate = { type: 'integer' };
    const drift = await clientDrift(changed);
    expect(drift).toMatch(/schema\.ts differs from the document from line \d+: run `npm run client`/);

    const withNewOperation = structuredClone(document);
    withNewOperation.paths['/api/v1/ext/orgs/{org}/widgets'] = { get: { operationId: 'listWidgets', responses: { 200: { description: 'OK' } } } };
    expect(await clientDrift(withNewOperation)).not.toBeNull();
  });

  it('a regenerated client is current again, and a missing one is reported', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-client-'));
    try {
      const file = pathToFileURL(path.join(dir, 'schema.ts'));
      const document = await openApiDocument();
      expect(await clientDrift(document, file)).toMatch(/is missing/);
      fs.writeFileSync(file, await clientTypes(document));
      expect(await clientDrift(document, file)).toBeNull();
      expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(CLIENT_TYPES_FILE, 'utf8'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
