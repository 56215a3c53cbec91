// Writes the typed client's types (src/client/schema.ts) from the live route schemas' document.
import fs from 'node:fs';
import { openApiDocument } from '../test/helpers/openapi.ts';
import { CLIENT_TYPES_FILE, clientTypes } from './client-types.ts';

fs.writeFileSync(CLIENT_TYPES_FILE, await clientTypes(await openApiDocument()));
console.log(`wrote ${CLIENT_TYPES_FILE.pathname}`);
