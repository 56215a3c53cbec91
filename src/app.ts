import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerAdminAuth } from './api/plugins/admin-auth.ts';
import { registerOrgAuth } from './api/plugins/auth.ts';
import { registerErrorHandling, sendError, toAppError } from './api/plugins/errors.ts';
import { registerIdempotency } from './api/plugins/idempotency.ts';
import { BODY_LIMIT_BYTES, registerJsonBody } from './api/plugins/json-body.ts';
import { nulInUrlError } from './api/plugins/nul-in-url.ts';
import { RateLimiter } from './api/plugins/rate-limit.ts';
import { registerDocsUi, registerOpenApi } from './api/openapi.ts';
import websocket from '@fastify/websocket';
import { adminRoutes } from './api/routes/admin.ts';
import { Agent as CustomAgent, adminRunnerRoutes } from './api/routes/admin-runners.ts';
import { podRoutes } from './api/routes/pods.ts';
import { loopRoutes } from './api/routes/loops.ts';
import * as loopSchemas from './api/schemas/loops.ts';
import { followPod } from './domain/loops/runs.ts';
import { QueuePromoter } from './domain/pods/queue.ts';
import { runnerRoutes } from './api/routes/runners.ts';
import * as podSchemas from './api/schemas/pods.ts';
import { RunnerGateway } from './gateway/links.ts';
import { InProcessNotifier, type RunnerNotifier } from './gateway/notifier.ts';
import { runnerLinkRoutes } from './gateway/routes.ts';
import { channelRoutes } from './api/routes/channels.ts';
import { adminRepositoryRoutes } from './api/routes/admin-repositories.ts';
import { healthRoutes } from './api/routes/health.ts';
import { repositoryRoutes } from './api/routes/repositories.ts';
import { ticketRoutes } from './api/routes/tickets.ts';
import * as adminSchemas from './api/schemas/admin.ts';
import * as channelSchemas from './api/schemas/channels.ts';
import { ErrorBody } from './api/schemas/common.ts';
import * as repositorySchemas from './api/schemas/repositories.ts';
import * as ticketSchemas from './api/schemas/tickets.ts';
import { validatorCompiler } from './api/validation.ts';
import { Authenticator } from './domain/auth/authenticate.ts';
import type { DomainContext } from './domain/context.ts';
import type { SecretBox } from './domain/secrets.ts';
import type { Store } from './store/db.ts';

export interface AppOptions {
  store: Store;
  adminToken: string;
  rateLimitPerMinute: number;
  /** A pino logger; tests run without one. */
  logger?: FastifyBaseLogger;
  now?: () => number;
  /** Encrypts stored repository tokens; without it, registering a repository with a token fails. */
  secrets?: SecretBox;
  /** Budget of one Git provider call (default 10 s). */
  providerTimeoutMs?: number;
  /** Carries "runner N has work" between replicas (default: in-process, for one replica). */
  notifier?: RunnerNotifier;
  /** The base URL agents call back on (DROVER_PUBLIC_URL); default: the address the server listens on. */
  publicUrl?: string | null;
  /** DROVER_DEFAULT_AGENT: the agent of loops that name none. */
  defaultAgent?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    drover: { ctx: DomainContext; gateway: RunnerGateway };
  }
}

/** Query-string values that must never reach a log line. */
const SECRET_PARAM = /^(access_token|token|key|api_key|secret)$/i;

function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of [...params.keys()]) if (SECRET_PARAM.test(name)) params.set(name, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

export const ORG_PREFIX = '/api/v1/ext/orgs/:org';

/** Builds the whole HTTP app without listening: the server and the tests share it. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const notifier = options.notifier ?? new InProcessNotifier();
  const ctx: DomainContext = {
    store: options.store,
    now: options.now ?? Date.now,
    secrets: options.secrets,
    providerTimeoutMs: options.providerTimeoutMs,
    wakeRunner: (runnerId, pod) => gateway.wake(runnerId, pod),
    podChanged: (pod) => followPod(ctx, pod),
    slotFreed: (orgId) => podQueue.wake(orgId),
    apiKeyRevoked: (keyId) => authenticator.forget(keyId),
    defaultAgent: options.defaultAgent,
  };
  const authenticator = new Authenticator(ctx);
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // One line per request, written by our onResponse hook with secrets redacted.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => `req_${crypto.randomUUID().replaceAll('-', '')}`,
    // `request.log` is the app's logger itself, not a child made for every request: log lines
    // name the request with an explicit `reqId`.
    childLoggerFactory: (logger) => logger,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Errors raised before routing (a malformed URL, an over-long path parameter) get the same body.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(reply, request, toAppError(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const podQueue = new QueuePromoter(() => ctx, app.log);
  const gateway = new RunnerGateway(ctx, notifier, () => options.publicUrl ?? app.listeningOrigin, app.log);
  app.decorate('drover', { ctx, gateway });
  app.addHook('onClose', async () => {
    await gateway.close();
    await podQueue.idle();
    await notifier.close();
  });

  app.setValidatorCompiler(validatorCompiler);
  await app.register(websocket, { options: { maxPayload: 2 * 1024 * 1024 } });
  for (const schema of [repositorySchemas.Repository, repositorySchemas.AdminRepository, repositorySchemas.MergeRequest]) app.addSchema(schema);
  registerErrorHandling(app);
  registerJsonBody(app);
  for (const schema of [ErrorBody, ticketSchemas.Ticket, ticketSchemas.TicketListItem, ticketSchemas.BoardTicket, adminSchemas.Org, adminSchemas.ApiKey, adminSchemas.User]) {
    app.addSchema(schema);
  }
  for (const schema of channelSchemas.SHARED_SCHEMAS) app.addSchema(schema);
  for (const schema of [podSchemas.PodListItem, podSchemas.Pod, podSchemas.RunnerPodItem, podSchemas.Runner, loopSchemas.Loop, loopSchemas.Run, CustomAgent]) app.addSchema(schema);
  await registerOpenApi(app);

  app.decorateRequest('principal', null as never);
  // Plain callback hooks (not async) on every request: they cost no promise each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done(nulInUrlError(request.url));
  });
  app.addHook('onResponse', (request, reply, done) => {
    app.log.info(
      { reqId: request.id, method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
    done();
  });

  await app.register(healthRoutes(options.store));

  await app.register(
    async (admin) => {
      registerAdminAuth(admin, options.adminToken);
      await admin.register(adminRoutes(ctx));
      await admin.register(adminRepositoryRoutes(ctx));
      await admin.register(adminRunnerRoutes(ctx));
    },
    { prefix: '/api/v1/admin' },
  );
  await app.register(runnerLinkRoutes(ctx, gateway), { prefix: '/api/v1/runner' });

  const rateLimiter = new RateLimiter(options.rateLimitPerMinute);
  await app.register(
    async (orgScoped) => {
      registerOrgAuth(orgScoped, { authenticator, rateLimiter });
      registerIdempotency(orgScoped, ctx);
      await orgScoped.register(ticketRoutes(ctx));
      await orgScoped.register(channelRoutes(ctx));
      await orgScoped.register(repositoryRoutes(ctx));
      await orgScoped.register(podRoutes(ctx));
      await orgScoped.register(runnerRoutes(ctx));
      await orgScoped.register(loopRoutes(ctx));
    },
    { prefix: ORG_PREFIX },
  );
  // The spec's loops example uses /api/v1/orgs/{org}: the loop endpoints are served there too, identically.
  await app.register(
    async (legacyLoops) => {
      registerOrgAuth(legacyLoops, { authenticator, rateLimiter });
      registerIdempotency(legacyLoops, ctx);
      await legacyLoops.register(loopRoutes(ctx));
    },
    { prefix: '/api/v1/orgs/:org' },
  );

  await registerDocsUi(app);
  return app;
}
