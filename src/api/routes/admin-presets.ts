import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import * as presets from '../../domain/presets/service.ts';
import { AdminOrgParams } from '../schemas/admin.ts';
import { MessageBody, PresetName, errorResponses } from '../schemas/common.ts';
import { CreatePresetBody, PresetEnvelope, PresetList, UpdatePresetBody, presetView } from '../schemas/presets.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];
const PresetParams = Type.Object({ ...AdminOrgParams.properties, name: PresetName });

/** Presets: a named agent plus agentfile lines a team shares (docs/api.md "Presets"). */
export const adminPresetRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function adminPresets(app) {
    app.post(
      '/orgs/:org/presets',
      {
        schema: { tags, security, operationId: 'createPreset', summary: 'Create a preset', params: AdminOrgParams, body: CreatePresetBody, response: { 201: PresetEnvelope, ...errorResponses(409) } },
      },
      async (request, reply) => reply.code(201).send({ preset: presetView(await presets.createPreset(ctx, request.params.org, request.body)) }),
    );
    app.get(
      '/orgs/:org/presets',
      { schema: { tags, security, operationId: 'adminListPresets', summary: 'List presets', params: AdminOrgParams, response: { 200: PresetList, ...errorResponses() } } },
      async (request) => ({ presets: (await presets.listPresetsOf(ctx, request.params.org)).map(presetView) }),
    );
    app.get(
      '/orgs/:org/presets/:name',
      { schema: { tags, security, operationId: 'getPreset', summary: 'Get a preset', params: PresetParams, response: { 200: PresetEnvelope, ...errorResponses() } } },
      async (request) => ({ preset: presetView(await presets.getPreset(ctx, request.params.org, request.params.name)) }),
    );
    app.put(
      '/orgs/:org/presets/:name',
      {
        schema: {
          tags,
          security,
          operationId: 'updatePreset',
          summary: "Change a preset's agent, lines or description (loops using it get the change from their next run)",
          params: PresetParams,
          body: UpdatePresetBody,
          response: { 200: PresetEnvelope, ...errorResponses() },
        },
      },
      async (request) => ({ preset: presetView(await presets.updatePreset(ctx, request.params.org, request.params.name, request.body)) }),
    );
    app.delete(
      '/orgs/:org/presets/:name',
      { schema: { tags, security, operationId: 'deletePreset', summary: 'Delete a preset (409 while loops use it)', params: PresetParams, response: { 200: MessageBody, ...errorResponses(409) } } },
      async (request) => {
        await presets.deletePreset(ctx, request.params.org, request.params.name);
        return { message: `Preset ${request.params.name} deleted.` };
      },
    );
  };
