import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DomainContext } from '../../domain/context.ts';
import { MAX_TOKEN_USES, createRegistrationToken, listRegistrationTokens, revokeRegistrationToken } from '../../domain/runners/registration-tokens.ts';
import type { RunnerTokenRow } from '../../store/schema-runners.ts';
import { MessageBody, Nullable, Text, Timestamp, errorResponses, iso, isoOrNull } from '../schemas/common.ts';
import { optionalBody } from '../plugins/optional-body.ts';
import { AdminKeyParams, AdminOrgParams } from '../schemas/admin.ts';

const tags = ['Administration'];
const security = [{ adminToken: [] }];

export const RunnerToken = Type.Object(
  {
    id: Type.Integer(),
    prefix: Nullable(Type.String({ description: 'the first 12 characters of the token, to recognise it (null for tokens issued before prefixes were kept)' })),
    labels: Type.Array(Type.String()),
    uses: Type.Integer({ description: 'registrations the token allows in all' }),
    uses_left: Type.Integer(),
    status: Type.Enum(['active', 'used', 'revoked', 'expired']),
    expires_at: Timestamp,
    revoked_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { $id: 'RunnerToken' },
);

const statusOf = (row: RunnerTokenRow, now: number) =>
  row.revoked_at !== null ? 'revoked' : row.uses_left <= 0 ? 'used' : row.expires_at <= now ? 'expired' : 'active';

const registrationTokenView = (row: RunnerTokenRow, now: number) => ({
  id: row.id,
  prefix: row.prefix,
  labels: JSON.parse(row.labels) as string[],
  uses: row.uses,
  uses_left: row.uses_left,
  status: statusOf(row, now) as 'active' | 'used' | 'revoked' | 'expired',
  expires_at: iso(row.expires_at),
  revoked_at: isoOrNull(row.revoked_at),
  created_at: iso(row.created_at),
});

/** Registration tokens for `drover runner --token` (docs/api.md, docs/decisions.md). */
export const adminRunnerRoutes = (ctx: DomainContext): FastifyPluginAsyncTypebox =>
  async function adminRunners(app) {
    app.post(
      '/orgs/:org/runner-tokens',
      {
        schema: {
          tags,
          security,
          operationId: 'createRunnerToken',
          summary: 'Issue a runner registration token (single-use unless `uses` says more); the token is shown only here',
          params: AdminOrgParams,
          body: Type.Object(
            {
              labels: Type.Optional(Type.Array(Text({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
              expires_in_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 365 })),
              uses: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKEN_USES, description: 'runners that may register with it (default 1)' })),
            },
            { additionalProperties: false },
          ),
          response: {
            201: Type.Object({ token: Type.String(), expires_at: Timestamp, runner_token: Type.Ref('RunnerToken') }),
            ...errorResponses(),
          },
        },
        preValidation: optionalBody,
      },
      async (request, reply) => {
        const { token, record } = await createRegistrationToken(ctx, request.params.org, request.body);
        return reply.code(201).send({ token, expires_at: iso(record.expires_at), runner_token: registrationTokenView(record, ctx.now()) });
      },
    );

    app.get(
      '/orgs/:org/runner-tokens',
      {
        schema: {
          tags,
          security,
          operationId: 'listRunnerTokens',
          summary: 'List registration tokens (never the tokens themselves): prefix, labels, uses left, expiry',
          params: AdminOrgParams,
          response: { 200: Type.Object({ runner_tokens: Type.Array(Type.Ref('RunnerToken')) }), ...errorResponses() },
        },
      },
      async (request) => {
        const now = ctx.now();
        return { runner_tokens: (await listRegistrationTokens(ctx, request.params.org)).map((row) => registrationTokenView(row, now)) };
      },
    );

    app.delete(
      '/orgs/:org/runner-tokens/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'revokeRunnerToken',
          summary: 'Revoke a registration token (runners it registered keep working)',
          params: AdminKeyParams,
          response: { 200: MessageBody, ...errorResponses() },
        },
      },
      async (request) => {
        await revokeRegistrationToken(ctx, request.params.org, request.params.id);
        return { message: `Registration token ${request.params.id} revoked.` };
      },
    );
  };
