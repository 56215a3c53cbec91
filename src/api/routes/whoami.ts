import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, OrgParams, errorResponses } from '../schemas/common.ts';

const Principal = Type.Object(
  {
    type: Type.Enum(['api_key', 'pod'], { description: 'api_key: an API key; pod: the token of a running pod (DROVER_POD_TOKEN)' }),
    scopes: Type.Array(Type.String(), {
      description: "The scopes the credential holds. A pod token's pods:write covers only spawning and terminating the pod's own children.",
    }),
    api_key_id: Nullable(Type.Integer({ description: 'the API key, null for a pod token' })),
    pod_key: Nullable(Type.String({ description: 'the pod whose token this is, null for an API key' })),
    user: Nullable(Type.Object({ id: Type.Integer(), name: Type.String() }, { description: 'the person the API key belongs to; null for a key of no one and for a pod token' })),
  },
  { additionalProperties: false },
);

/** GET /auth/whoami: who the credential is and what it may do (`drover mcp` lists only the tools it allows). */
export const whoamiRoutes = (): FastifyPluginAsyncTypebox =>
  async function whoami(app) {
    app.get(
      '/auth/whoami',
      {
        config: { anyCredential: true },
        schema: {
          tags: ['Auth'],
          operationId: 'whoami',
          summary: 'The calling credential: an API key or a pod token, and its scopes (any valid credential of the organization may ask)',
          params: OrgParams,
          response: { 200: Type.Object({ principal: Principal }), ...errorResponses() },
        },
      },
      async (request) => {
        const p = request.principal;
        return {
          principal: {
            type: p.kind,
            scopes: [...p.scopes],
            api_key_id: p.kind === 'api_key' ? p.keyId : null,
            pod_key: p.kind === 'pod' ? p.podKey : null,
            user: p.kind === 'api_key' ? p.user : null,
          },
        };
      },
    );
  };
