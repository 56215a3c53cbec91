import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { podListItem, podView } from '../../domain/pods/view.ts';
import * as service from '../../domain/pods/service.ts';
import { canonicalSlug } from '../../domain/tickets/model.ts';
import { readTranscript } from '../../domain/pods/transcript.ts';
import { readPatch } from '../../domain/deliveries/service.ts';
import { IdempotencyHeaders, MessageBody, OrgParams, clampLimit, errorResponses, isTrue, iso } from '../schemas/common.ts';
import * as s from '../schemas/pods.ts';
import { Transcript, TranscriptQuery } from '../schemas/transcripts.ts';

const tags = ['Pods'];

export const podRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function podsApi(app) {
    app.get(
      '/pods',
      {
        config: { scope: 'pods:read' },
        schema: { tags, operationId: 'listPods', summary: 'List pods, newest first', params: OrgParams, querystring: s.ListPodsQuery, response: { 200: Type.Object({ pods: Type.Array(Type.Ref('PodListItem')), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }), ...errorResponses() } },
      },
      async (request) => {
        const limit = clampLimit(request.query.limit ?? 20, 100);
        const offset = request.query.offset ?? 0;
        const { status, ticket_slug, repository_id, agent_slug, runner_id, created_after } = request.query;
        const filter = {
          status,
          ticketSlug: ticket_slug === undefined ? undefined : canonicalSlug(ticket_slug),
          repositoryId: repository_id,
          agentSlug: agent_slug,
          runnerId: runner_id,
          createdAfter: created_after === undefined ? undefined : Date.parse(created_after),
        };
        const { rows, total, positions } = await service.listPods(ctx, request.principal.org.id, filter, { limit, offset });
        return { pods: rows.map((pod) => podListItem(pod, positions.get(pod.id) ?? null)), total, limit, offset };
      },
    );

    app.get(
      '/pods/:key',
      { config: { scope: 'pods:read' }, schema: { tags, operationId: 'getPod', summary: 'Get a pod', params: s.PodParams, response: { 200: Type.Object({ pod: Type.Ref('Pod') }), ...errorResponses() } } },
      async (request) => {
        const { pod, queuePosition } = await service.getPodWithPosition(ctx, request.principal.org.id, request.params.key);
        return { pod: podView(pod, queuePosition) };
      },
    );

    app.get(
      '/pods/:key/output',
      {
        config: { scope: 'pods:read' },
        schema: { tags, operationId: 'getPodOutput', summary: "The agent's combined output (the last 1 MiB is kept)", params: s.PodParams, querystring: s.OutputQuery, response: { 200: Type.Object({ output: Type.String(), truncated: Type.Boolean(), total_bytes: Type.Integer() }), ...errorResponses() } },
      },
      async (request) => service.readOutput(ctx, request.principal.org.id, request.params.key, request.query.tail_bytes),
    );

    app.get(
      '/pods/:key/transcript',
      {
        config: { scope: 'pods:read' },
        schema: { tags, operationId: 'getPodTranscript', summary: "The agent's output read as what it did: its texts, tool calls with their results, errors", params: s.PodParams, querystring: TranscriptQuery, response: { 200: Transcript, ...errorResponses() } },
      },
      async (request) => {
        const { after, before, newest, limit, format } = request.query;
        return readTranscript(ctx, request.principal.org.id, request.params.key, { after, before, newest: isTrue(newest), limit: clampLimit(limit ?? 1000, 5000), format });
      },
    );

    app.get(
      '/pods/:key/patch',
      {
        config: { scope: 'pods:read' },
        schema: {
          tags,
          operationId: 'getPodPatch',
          summary: "The pod's work as `git format-patch` text (kept whatever became of the push); 404 when there is none",
          params: s.PodParams,
          response: { 200: { description: 'git format-patch text', content: { 'text/x-patch': { schema: Type.String() } } }, ...errorResponses() },
        },
      },
      async (request, reply) => {
        const patch = await readPatch(ctx, request.principal.org.id, request.params.key);
        return reply.type('text/x-patch; charset=utf-8').send(patch);
      },
    );

    app.post(
      '/pods',
      {
        config: { scope: 'pods:write', idempotent: true },
        schema: { tags, operationId: 'createPod', headers: IdempotencyHeaders, summary: 'Create a pod: an agent run on a runner, or queued until a runner slot frees (status `queued`)', params: OrgParams, body: s.CreatePodBody, response: { 201: s.CreatedPod, ...errorResponses(409, 503) } },
      },
      async (request, reply) => {
        const pod = await service.createPod(ctx, request.principal, request.body);
        return reply.code(201).send({ pod: { pod_key: pod.key, status: pod.status, agent_slug: pod.agent_slug, created_at: iso(pod.created_at) } });
      },
    );

    app.post(
      '/pods/:key/terminate',
      { config: { scope: 'pods:write' }, schema: { tags, operationId: 'terminatePod', summary: 'Terminate an active pod', params: s.PodParams, response: { 200: MessageBody, ...errorResponses(409) } } },
      async (request) => {
        const pod = await service.terminatePodAs(ctx, request.principal, request.params.key);
        return { message: `Pod ${pod.key} terminated.` };
      },
    );
  };
