import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../domain/auth/scopes.ts';

export const API_VERSION = '0.1.0';

/** OpenAPI 3.1 generated from the route schemas; shared schemas become named components. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Drover API',
        version: API_VERSION,
        description:
          'Control plane for AI coding agents. Every resource lives under /api/v1/ext/orgs/{org}. ' +
          `Scopes: ${SCOPES.join(', ')}; a :write scope implies the matching :read.`,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (admin endpoints only)' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
}

export async function registerDocsUi(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
