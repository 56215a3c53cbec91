import { buildApp } from '../../src/serve/build-app.ts';
import { openStore } from '../../src/store/db.ts';

/** The generated document, from an app on an in-memory store (routes need no data to describe). */
export async function openApiDocument(): Promise<unknown> {
  const store = openStore({ sqlitePath: ':memory:' });
  const app = await buildApp({ store, adminToken: 'unused', rateLimitPerMinute: 0 });
  await app.ready();
  const document = app.swagger();
  await app.close();
  await store.close();
  return document;
}
