import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readActivity } from '../../domain/activity/service.ts';
import type { Scope } from '../../protocol/scopes.ts';
import type { DomainContext } from '../../domain/context.ts';
import { listPresets } from '../../domain/presets/service.ts';
import { listOrgUsers } from '../../domain/users/service.ts';
import { EVENT_SCOPES } from '../../protocol/event-types.ts';
import { ActivityPage, ActivityQuery } from '../schemas/activity.ts';
import { OrgParams, errorResponses } from '../schemas/common.ts';
import { PresetList, presetView } from '../schemas/presets.ts';
import { chosenTypes } from './events.ts';

const READ_SCOPES = [...new Set(Object.values(EVENT_SCOPES))] as Scope[];

/** GET /activity, and the lists pickers need: GET /users, GET /presets (docs/api.md "Actors and activity"). */
export const activityRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function activity(app) {
    app.get(
      '/activity',
      {
        config: { anyScope: READ_SCOPES },
        schema: {
          tags: ['Activity'],
          operationId: 'listActivity',
          summary: 'The event log as pages of JSON, newest first, with who made each change (only the types the key may read)',
          params: OrgParams,
          querystring: ActivityQuery,
          response: { 200: ActivityPage, ...errorResponses() },
        },
      },
      async (request) => {
        const { from, to, types, actor_type, cursor, limit } = request.query;
        return readActivity(ctx, request.principal.org.id, {
          from,
          to,
          types: chosenTypes(types, request.principal.scopes),
          actorType: actor_type,
          cursor,
          limit: limit ?? 50,
        });
      },
    );

    app.get(
      '/users',
      {
        config: { anyCredential: true },
        schema: {
          tags: ['Users'],
          operationId: 'listOrgUsers',
          summary: "The organization's people, for pickers (any credential of the organization)",
          params: OrgParams,
          response: { 200: Type.Object({ users: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })) }), ...errorResponses() },
        },
      },
      async (request) => ({ users: await listOrgUsers(ctx, request.principal.org.id) }),
    );

    app.get(
      '/presets',
      {
        config: { anyCredential: true },
        schema: {
          tags: ['Presets'],
          operationId: 'listPresets',
          summary: "The organization's presets: a named agent and agentfile lines pods and loops start from (any credential of the organization)",
          params: OrgParams,
          response: { 200: PresetList, ...errorResponses() },
        },
      },
      async (request) => ({ presets: (await listPresets(ctx, request.principal.org.id)).map(presetView) }),
    );
  };
