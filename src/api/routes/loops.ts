import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { grants } from '../../protocol/scopes.ts';
import { optionalBody } from '../plugins/optional-body.ts';
import type { DomainContext } from '../../domain/context.ts';
import { checkVariablesDepth } from '../../domain/loops/model.ts';
import { runRecords } from '../../domain/loops/records.ts';
import { cancelRun } from '../../domain/loops/run-follow.ts';
import * as service from '../../domain/loops/service.ts';
import { loopView } from '../../domain/loops/view.ts';
import type { LoopStats } from '../../store/loops.ts';
import type { LoopRow } from '../../store/schema-loops.ts';
import { IdempotencyHeaders, MessageBody, OrgParams, clampLimit, errorResponses } from '../schemas/common.ts';
import * as s from '../schemas/loops.ts';

const tags = ['Loops'];

/**
 * Template values are bounded in depth before the schema runs: the validator descends a value one
 * call per level, and a 1 MiB body can nest half a million.
 */
const boundedNesting = (field: 'prompt_variables' | 'variables') => async (request: FastifyRequest) =>
  checkVariablesDepth(`/${field}`, (request.body as Record<string, unknown> | undefined)?.[field]);

export const loopRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function loopsApi(app) {
    /** The loop record of docs/api.md; the callback secret only for keys that may write loops. */
    const loopViewFor = (request: FastifyRequest, loop: LoopRow, stats: LoopStats | null | undefined) => ({
      ...loopView(loop, stats),
      ...(grants(request.principal.scopes, 'loops:write') && ctx.secrets ? { callback_secret: ctx.secrets.decrypt(loop.callback_secret_encrypted) } : {}),
    });
    const loopWithStatsView = async (request: FastifyRequest, loop: LoopRow) => {
      const { stats } = await service.loopWithStats(ctx, loop);
      return { loop: loopViewFor(request, loop, stats) };
    };
    const read = { scope: 'loops:read' as const };
    const write = { scope: 'loops:write' as const };
    const LoopEnvelope = Type.Object({ loop: Type.Ref('Loop') });
    const RunEnvelope = Type.Object({ run: Type.Ref('Run') });

    app.get(
      '/loops',
      { config: read, schema: { tags, operationId: 'listLoops', summary: 'List loops, newest first', params: OrgParams, querystring: s.ListLoopsQuery, response: { 200: Type.Object({ loops: Type.Array(Type.Ref('Loop')), total: Type.Integer() }), ...errorResponses() } } },
      async (request) => {
        const { limit, offset } = request.query;
        const page = limit === undefined && offset === undefined ? null : { limit: clampLimit(limit ?? 100, 100), offset: offset ?? 0 };
        const { rows, total, stats } = await service.listLoops(ctx, request.principal.org.id, page);
        return { loops: rows.map((loop) => loopViewFor(request, loop, stats.get(loop.id))), total };
      },
    );

    app.post(
      '/loops',
      { config: { ...write, idempotent: true }, schema: { tags, operationId: 'createLoop', headers: IdempotencyHeaders, summary: 'Create a loop', params: OrgParams, body: s.CreateLoopBody, response: { 201: LoopEnvelope, ...errorResponses(409) } }, preValidation: boundedNesting('prompt_variables') },
      async (request, reply) => reply.code(201).send(await loopWithStatsView(request, await service.createLoop(ctx, request.principal.org.id, request.body))),
    );

    app.get(
      '/loops/:slug',
      { config: read, schema: { tags, operationId: 'getLoop', summary: 'Get a loop', params: s.LoopParams, response: { 200: LoopEnvelope, ...errorResponses() } } },
      async (request) => loopWithStatsView(request, await service.requireLoop(ctx.store.db, request.principal.org.id, request.params.slug)),
    );

    app.put(
      '/loops/:slug',
      { config: write, schema: { tags, operationId: 'updateLoop', summary: 'Update a loop; only the given fields change', params: s.LoopParams, body: s.UpdateLoopBody, response: { 200: LoopEnvelope, ...errorResponses() } }, preValidation: boundedNesting('prompt_variables') },
      async (request) => loopWithStatsView(request, await service.updateLoop(ctx, request.principal.org.id, request.params.slug, request.body)),
    );

    app.delete(
      '/loops/:slug',
      { config: write, schema: { tags, operationId: 'deleteLoop', summary: 'Delete a loop and its run history (active runs are cancelled first)', params: s.LoopParams, body: s.EmptyBody, response: { 200: MessageBody, ...errorResponses() } }, preValidation: optionalBody },
      async (request) => {
        await service.deleteLoop(ctx, request.principal.org.id, request.params.slug);
        return { message: `Loop ${request.params.slug} deleted.` };
      },
    );

    app.post(
      '/loops/:slug/enable',
      { config: write, schema: { tags, operationId: 'enableLoop', summary: 'Enable a loop (idempotent)', params: s.LoopParams, body: s.EmptyBody, response: { 200: LoopEnvelope, ...errorResponses() } }, preValidation: optionalBody },
      async (request) => loopWithStatsView(request, await service.enableLoop(ctx, request.principal.org.id, request.params.slug)),
    );

    app.post(
      '/loops/:slug/disable',
      { config: write, schema: { tags, operationId: 'disableLoop', summary: 'Disable a loop (idempotent); queued runs are cancelled', params: s.LoopParams, body: s.EmptyBody, response: { 200: LoopEnvelope, ...errorResponses() } }, preValidation: optionalBody },
      async (request) => loopWithStatsView(request, await service.disableLoop(ctx, request.principal.org.id, request.params.slug)),
    );

    app.post(
      '/loops/:slug/trigger',
      {
        config: { ...write, idempotent: true },
        schema: { tags, operationId: 'triggerLoop', headers: IdempotencyHeaders, summary: 'Start a run now; the run status says what the concurrency policy decided', params: s.LoopParams, body: s.TriggerBody, response: { 201: RunEnvelope, ...errorResponses(409) } },
        preValidation: [optionalBody, boundedNesting('variables')],
      },
      async (request, reply) => {
        const run = await service.manualTrigger(ctx, request.principal.org.id, request.params.slug, request.body?.variables);
        return reply.code(201).send({ run: (await runRecords(ctx.store.db, [run], request.params.slug))[0] });
      },
    );

    app.get(
      '/loops/:slug/runs',
      { config: read, schema: { tags, operationId: 'listLoopRuns', summary: 'Runs of a loop, most recent first', params: s.LoopParams, querystring: s.ListRunsQuery, response: { 200: Type.Object({ runs: Type.Array(Type.Ref('Run')), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }), ...errorResponses() } } },
      async (request) => {
        const limit = clampLimit(request.query.limit ?? 20, 100);
        const offset = request.query.offset ?? 0;
        const { loop, rows, total } = await service.listRuns(ctx, request.principal.org.id, request.params.slug, request.query.status, { limit, offset });
        return { runs: await runRecords(ctx.store.db, rows, loop.slug), total, limit, offset };
      },
    );

    app.get(
      '/loops/:slug/runs/:run_id',
      { config: read, schema: { tags, operationId: 'getLoopRun', summary: 'Get a run', params: s.RunParams, response: { 200: RunEnvelope, ...errorResponses() } } },
      async (request) => {
        const { loop, run } = await service.getRun(ctx, request.principal.org.id, request.params.slug, request.params.run_id);
        return { run: (await runRecords(ctx.store.db, [run], loop.slug))[0] };
      },
    );

    app.post(
      '/loops/:slug/runs/:run_id/cancel',
      { config: write, schema: { tags, operationId: 'cancelLoopRun', summary: 'Cancel an active run (its pod is terminated)', params: s.RunParams, body: s.EmptyBody, response: { 200: Type.Object({ message: Type.String(), run: Type.Ref('Run') }), ...errorResponses(409) } }, preValidation: optionalBody },
      async (request) => {
        const loop = await service.requireLoop(ctx.store.db, request.principal.org.id, request.params.slug);
        const run = await cancelRun(ctx, loop, request.params.run_id);
        return { message: `Run ${run.id} cancelled.`, run: (await runRecords(ctx.store.db, [run], loop.slug))[0] };
      },
    );
  };
