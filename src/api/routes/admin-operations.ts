import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { getQuotas, updateQuotas, type QuotaView } from '../../domain/quotas/service.ts';
import { deleteRunner, listOrgRunners, rotateRunnerCredential } from '../../domain/runners/admin.ts';
import { MessageBody, errorResponses } from '../schemas/common.ts';
import { AdminOrgParams } from '../schemas/admin.ts';
import { AdminRunnerParams, UpdateQuotasBody } from '../schemas/operations.ts';
import { runnerView as presentRunner } from '../../domain/runners/view.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];
const QuotasEnvelope = Type.Object({ quotas: Type.Ref('OrgQuotas') });

const quotasView = (org: string, view: QuotaView) => ({ quotas: { org, ...view } });

/** Runner lifecycle (list, delete, credential rotation) and per-organization quotas (docs/decisions.md). */
export const adminOperationRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function adminOperations(app) {
    app.get(
      '/orgs/:org/runners',
      { schema: { tags, security, operationId: 'adminListRunners', summary: "List an organization's runners", params: AdminOrgParams, response: { 200: Type.Object({ runners: Type.Array(Type.Ref('Runner')) }), ...errorResponses() } } },
      async (request) => ({ runners: (await listOrgRunners(ctx, request.params.org)).map(presentRunner) }),
    );

    app.delete(
      '/orgs/:org/runners/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'adminDeleteRunner', summary: "Delete a runner: its credential is revoked at once, its link closed and its active pods failed",
          params: AdminRunnerParams,
          response: { 200: MessageBody, ...errorResponses() },
        },
      },
      async (request) => {
        await deleteRunner(ctx, request.params.org, request.params.id);
        return { message: `Runner ${request.params.id} deleted; its credential is revoked.` };
      },
    );

    app.post(
      '/orgs/:org/runners/:id/rotate-credential',
      {
        schema: {
          tags,
          security,
          operationId: 'adminRotateRunnerCredential', summary: 'Give a connected runner a new credential over its link; the old one stops working once the runner has stored it',
          params: AdminRunnerParams,
          response: { 200: Type.Object({ message: Type.String(), runner: Type.Ref('Runner') }), ...errorResponses(409) },
        },
      },
      async (request) => {
        const runner = await rotateRunnerCredential(ctx, request.params.org, request.params.id);
        return { message: `Runner ${runner.id} stored a new credential; the previous one no longer works.`, runner: presentRunner(runner) };
      },
    );

    app.get(
      '/orgs/:org/quotas',
      { schema: { tags, security, operationId: 'adminGetQuotas', summary: "An organization's quotas: its overrides, the server defaults and what applies", params: AdminOrgParams, response: { 200: QuotasEnvelope, ...errorResponses() } } },
      async (request) => quotasView(request.params.org, await getQuotas(ctx, request.params.org)),
    );

    app.patch(
      '/orgs/:org/quotas',
      {
        schema: { tags, security, operationId: 'adminUpdateQuotas', summary: "Change an organization's quotas (null: back to the server default; 0: no limit)", params: AdminOrgParams, body: UpdateQuotasBody, response: { 200: QuotasEnvelope, ...errorResponses() } },
      },
      async (request) => quotasView(request.params.org, await updateQuotas(ctx, request.params.org, request.body)),
    );
  };
