/**
 * The baseline: a bare Fastify server (no logging, auth, validation, database or response schema)
 * answering the ticket-list route with a JSON document held in memory, serialised per request as
 * any plain Fastify handler would; and `POST` on the same route, answering 201 with a ticket made
 * in memory from the parsed body (the list's first ticket as its template; nothing is kept).
 * Run as its own process: `node --import tsx bench/bare-server.ts <json file>`.
 */
import fs from 'node:fs';
import Fastify from 'fastify';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: bare-server.ts <json file>\n');
  process.exit(2);
}
const body = JSON.parse(fs.readFileSync(file, 'utf8')) as { tickets: Array<Record<string, unknown>> };
const template = body.tickets[0] ?? {};
let created = 0;

const app = Fastify({ logger: false });
app.get('/api/v1/ext/orgs/:org/tickets', async () => body);
app.post('/api/v1/ext/orgs/:org/tickets', async (request, reply) => {
  const fields = request.body as Record<string, unknown>;
  const id = ++created;
  const now = new Date().toISOString();
  reply.code(201);
  return { ticket: { ...template, ...fields, id, slug: `BARE-${id}`, status: 'backlog', created_at: now, updated_at: now } };
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`Bare listening on http://127.0.0.1:${port}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
