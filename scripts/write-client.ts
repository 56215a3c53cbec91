// Writes the typed client's types (src/client/schema.ts) and its input enums (src/client/enums.ts)
// from the live route schemas' document.
import fs from 'node:fs';
import { openApiDocument } from '../test/helpers/openapi.ts';
import { CLIENT_ENUMS_FILE, clientEnums } from './client-enums.ts';
import { CLIENT_TYPES_FILE, clientTypes } from './client-types.ts';

const document = await openApiDocument();
fs.writeFileSync(CLIENT_TYPES_FILE, await clientTypes(document));
console.log(`wrote ${CLIENT_TYPES_FILE.pathname}`);
fs.writeFileSync(CLIENT_ENUMS_FILE, clientEnums(document));
console.log(`wrote ${CLIENT_ENUMS_FILE.pathname}`);
