// Writes the committed copy of the OpenAPI document (docs/openapi.json) from the live route schemas.
import fs from 'node:fs';
import { openApiDocument } from '../test/helpers/openapi.ts';

const file = new URL('../docs/openapi.json', import.meta.url);
fs.mkdirSync(new URL('.', file), { recursive: true });
fs.writeFileSync(file, JSON.stringify(await openApiDocument(), null, 2) + '\n');
console.log(`wrote ${file.pathname}`);
