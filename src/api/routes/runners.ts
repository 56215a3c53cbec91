import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { runnerView } from '../../domain/runners/view.ts';
import * as service from '../../domain/runners/service.ts';
import { OrgParams, clampLimit, errorResponses, iso } from '../schemas/common.ts';
import * as s from '../schemas/pods.ts';

const tags = ['Runners'];
const RunnerList = Type.Object({ runners: Type.Array(Type.Ref('Runner')) });

export const runnerRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function runnersApi(app) {
    const config = { scope: 'runners:read' as const };
    app.get('/runners', { config, schema: { tags, operationId: 'listRunners', summary: 'List runners', params: OrgParams, response: { 200: RunnerList, ...errorResponses() } } }, async (request) => ({
      runners: (await service.listRunners(ctx, request.principal.org.id)).map(runnerView),
    }));

    app.get(
      '/runners/available',
      { config, schema: { tags, operationId: 'listAvailableRunners', summary: 'Online runners with free capacity', params: OrgParams, response: { 200: RunnerList, ...errorResponses() } } },
      async (request) => ({ runners: (await service.availableRunners(ctx, request.principal.org.id)).map(runnerView) }),
    );

    app.get(
      '/runners/:id',
      { config, schema: { tags, operationId: 'getRunner', summary: 'Get a runner', params: s.RunnerParams, response: { 200: Type.Object({ runner: Type.Ref('Runner') }), ...errorResponses() } } },
      async (request) => ({ runner: runnerView(await service.getRunner(ctx, request.principal.org.id, request.params.id)) }),
    );

    app.get(
      '/runners/:id/pods',
      {
        config,
        schema: { tags, operationId: 'listRunnerPods', summary: 'Pods on a runner, newest first', params: s.RunnerParams, querystring: s.RunnerPodsQuery, response: { 200: Type.Object({ pods: Type.Array(Type.Ref('RunnerPodItem')), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }), ...errorResponses() } },
      },
      async (request) => {
        const limit = clampLimit(request.query.limit ?? 50, 100);
        const offset = request.query.offset ?? 0;
        const { rows, total } = await service.runnerPods(ctx, request.principal.org.id, request.params.id, { status: request.query.status }, { limit, offset });
        return {
          pods: rows.map((p) => ({ key: p.key, status: p.status, agent_slug: p.agent_slug, runner_id: p.runner_id, prompt: p.prompt, created_at: iso(p.created_at) })),
          total,
          limit,
          offset,
        };
      },
    );
  };
