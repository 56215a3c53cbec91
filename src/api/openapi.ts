import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { SCOPES } from '../protocol/scopes.ts';
import { optionalBody } from './plugins/optional-body.ts';

export const API_VERSION = '0.1.0';

/** The loop endpoints are served twice (docs/api.md); the second copy's operations get this suffix. */
const ORGS_PREFIX = '/api/v1/orgs/';
export const ORGS_PREFIX_OPERATION_SUFFIX = 'AtOrgsPrefix';

const REQUEST_ID_HEADER = { type: 'string', description: 'The id of this request; an error body repeats it as request_id' };
const RETRY_AFTER_HEADER = { type: 'integer', minimum: 1, description: 'Seconds to wait before retrying' };
const REPLAYED_HEADER = { type: 'string', enum: ['true'], description: 'Present when the response replays an earlier request with the same Idempotency-Key' };

type RouteSchema = Record<string, unknown> & { response?: Record<string, Record<string, unknown>>; hide?: boolean; operationId?: string };

const hooksOf = (hooks: unknown): unknown[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

/**
 * What the document says about every route beyond its schemas, from the one place that decides
 * it: the scope a route requires (its `config.scope`), its optional body (the `optionalBody`
 * hook), the X-Request-Id header every response carries, Retry-After on 429, and the replay
 * header of idempotent creates. Works on a copy: the route's own schemas also serialize responses.
 */
function describeRoute({ schema, url, route }: { schema: RouteSchema; url: string; route: RouteOptions }) {
  if (!schema || schema.hide) return { schema, url };
  const described: RouteSchema = { ...schema };
  if (schema.operationId && url.startsWith(ORGS_PREFIX)) described.operationId = schema.operationId + ORGS_PREFIX_OPERATION_SUFFIX;
  const scope = route.config?.scope;
  if (scope) described['x-required-scopes'] = [scope];
  else if (route.config?.anyScope) described['x-required-scopes'] = [...route.config.anyScope];
  // Any valid credential of the organization (GET /auth/whoami): no scope at all.
  else if (route.config?.anyCredential) described['x-required-scopes'] = [];
  if (hooksOf(route.preValidation).includes(optionalBody)) described['x-optional-body'] = true;
  if (schema.response) {
    described.response = Object.fromEntries(
      Object.entries(schema.response).map(([status, response]) => {
        const headers: Record<string, unknown> = { 'x-request-id': REQUEST_ID_HEADER };
        if (status === '429') headers['retry-after'] = RETRY_AFTER_HEADER;
        if (route.config?.idempotent && status.startsWith('2')) headers['idempotent-replayed'] = REPLAYED_HEADER;
        const description = status === '201' ? 'Created' : status.startsWith('2') ? 'OK' : undefined;
        return [status, { ...(description ? { 'x-response-description': description } : {}), ...response, headers }];
      }),
    );
  }
  return { schema: described, url };
}

type Response = { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> };
type Operation = Record<string, unknown> & { requestBody?: { required?: boolean }; responses?: Record<string, Response | { $ref: string }> };

const HEADER_COMPONENTS: Record<string, string> = { 'x-request-id': 'X-Request-Id', 'retry-after': 'Retry-After', 'idempotent-replayed': 'Idempotent-Replayed' };

/**
 * The last touches on the whole document: @fastify/swagger marks every request body as required
 * (Fastify needs one where a body schema exists), so routes with the optionalBody hook say they
 * take none; and the error responses and headers every operation shares are written once, as
 * components, instead of in each of them.
 */
function finishDocument({ openapiObject }: { openapiObject: Record<string, unknown> }) {
  const components = openapiObject.components as Record<string, Record<string, unknown>>;
  components.responses = {};
  components.headers = {};
  for (const item of Object.values(openapiObject.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) {
      if (operation['x-optional-body']) {
        delete operation['x-optional-body'];
        if (operation.requestBody) operation.requestBody.required = false;
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if ('$ref' in response) continue;
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          const component = HEADER_COMPONENTS[name];
          if (!component) continue;
          components.headers[component] ??= header;
          response.headers![name] = { $ref: `#/components/headers/${component}` };
        }
        if (response.content?.['application/json']?.schema?.$ref === '#/components/schemas/ErrorBody') {
          components.responses[`Error${status}`] ??= response;
          operation.responses![status] = { $ref: `#/components/responses/Error${status}` };
        }
      }
    }
  }
  return openapiObject;
}

/** The callback a loop's callback_url receives when a run ends (docs/api.md). */
const WEBHOOKS = {
  'loop.run.finished': {
    post: {
      operationId: 'loopRunFinished',
      summary: "A loop run ended (any final status but skipped): POSTed to the loop's callback_url",
      description:
        'Signed per the Standard Webhooks spec with the loop\'s callback_secret (whsec_…): the signature is ' +
        '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`. A 2xx answer is a delivery; 410 stops retries; ' +
        'anything else (or no answer within 10 s; redirects are not followed) is retried after 5 s, 5 min, 30 min, 2 h, 5 h and 10 h, ' +
        'with the same webhook-id and body.',
      parameters: [
        { in: 'header', name: 'webhook-id', required: true, schema: { type: 'string' }, description: 'The same on every attempt of one event (msg_…)' },
        { in: 'header', name: 'webhook-timestamp', required: true, schema: { type: 'string' }, description: 'Seconds since the epoch, of this attempt' },
        { in: 'header', name: 'webhook-signature', required: true, schema: { type: 'string' }, description: 'v1,<base64 signature>' },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/LoopRunFinishedEvent' } } } },
      responses: {
        '2XX': { description: 'Delivered: no retry' },
        '410': { description: 'Gone: no retry' },
        default: { description: 'Retried on the schedule above' },
      },
    },
  },
};

/** OpenAPI 3.1 generated from the route schemas; shared schemas become named components. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Drover API',
        version: API_VERSION,
        description:
          'Control plane for AI coding agents. Every resource lives under /api/v1/ext/orgs/{org} (the loop endpoints also under ' +
          `/api/v1/orgs/{org}; their operation ids end in ${ORGS_PREFIX_OPERATION_SUFFIX}). Scopes: ${SCOPES.join(', ')}; a :write ` +
          'scope implies the matching :read. Each operation names its scope in x-required-scopes. Strings may not contain ' +
          'U+0000 anywhere (bodies, paths, queries). Bodies are JSON objects of at most 1 MiB; unknown fields and query ' +
          'parameters are 400. Every error is the Error schema with the X-Request-Id header.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (admin endpoints only)' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      // The plugin's types know only path items with literal types; the object is a valid one.
      webhooks: WEBHOOKS as never,
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform: describeRoute as never,
    transformObject: finishDocument as never,
  });
}

export async function registerDocsUi(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
