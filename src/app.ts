import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerAdminAuth } from './api/plugins/admin-auth.ts';
import { registerActors } from './api/plugins/actor.ts';
import { registerOrgAuth } from './api/plugins/auth.ts';
import { whoamiRoutes } from './api/routes/whoami.ts';
import { MAX_HEADER_BYTES, answerNodeLevelRequests, clientErrorHandler, newRequestId } from './api/plugins/client-errors.ts';
import { registerErrorHandling, sendError, toAppError } from './api/plugins/errors.ts';
import { registerIdempotency } from './api/plugins/idempotency.ts';
import { BODY_LIMIT_BYTES, registerJsonBody } from './api/plugins/json-body.ts';
import { nulInUrlError } from './api/plugins/nul-in-url.ts';
import { redactUrl } from './api/plugins/redact.ts';
import { requestLogWriter } from './api/plugins/request-log.ts';
import { ShutdownOrder } from './api/plugins/shutdown.ts';
import { registerRateLimits, type RateLimitSettings } from './api/plugins/rate-limit.ts';
import { Metrics } from './api/metrics.ts';
import { metricsRoutes } from './api/routes/metrics.ts';
import { registerDocsUi, registerOpenApi } from './api/openapi.ts';
import websocket from '@fastify/websocket';
import { adminRoutes } from './api/routes/admin.ts';
import { adminPresetRoutes } from './api/routes/admin-presets.ts';
import { activityRoutes } from './api/routes/activity.ts';
import { Agent as CustomAgent, adminAgentRoutes } from './api/routes/admin-agents.ts';
import { RunnerToken, adminRunnerRoutes } from './api/routes/admin-runners.ts';
import { adminOperationRoutes } from './api/routes/admin-operations.ts';
import { OrgQuotas } from './api/schemas/operations.ts';
import { podRoutes } from './api/routes/pods.ts';
import { loopRoutes } from './api/routes/loops.ts';
import { loopDeliveryRoutes } from './api/routes/loop-deliveries.ts';
import * as loopSchemas from './api/schemas/loops.ts';
import { runnerRoutes } from './api/routes/runners.ts';
import { usageRoutes } from './api/routes/usage.ts';
import * as podSchemas from './api/schemas/pods.ts';
import { Delivery } from './api/schemas/deliveries.ts';
import type { RunnerGateway } from './gateway/links.ts';
import { runnerLinkRoutes } from './api/routes/runner-link.ts';
import { channelRoutes } from './api/routes/channels.ts';
import { adminRepositoryRoutes } from './api/routes/admin-repositories.ts';
import { dashboardRoutes, type DashboardAssets } from './api/routes/dashboard.ts';
import { healthRoutes } from './api/routes/health.ts';
import { repositoryRoutes } from './api/routes/repositories.ts';
import { ticketRoutes } from './api/routes/tickets.ts';
import { eventRoutes } from './api/routes/events.ts';
import type { SseStream } from './api/sse.ts';
import type { EventHub } from './events/hub.ts';
import * as adminSchemas from './api/schemas/admin.ts';
import * as channelSchemas from './api/schemas/channels.ts';
import { ErrorBody, JsonValue, NoQuery } from './api/schemas/common.ts';
import * as repositorySchemas from './api/schemas/repositories.ts';
import * as ticketSchemas from './api/schemas/tickets.ts';
import { buildSerializer } from './api/serialization.ts';
import { validatorCompiler } from './api/validation.ts';
import { AppError } from './errors.ts';
import type { DomainContext } from './domain/context.ts';
import type { Runtime } from './serve/runtime.ts';

/** DROVER_REQUEST_TIMEOUT_MS: a request's headers and body must arrive within this (docs/decisions.md). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** How the HTTP app is set up; what it serves comes from the runtime (serve/runtime.ts). */
export interface HttpOptions {
  adminToken: string;
  /** Requests per API key per minute (DROVER_RATE_LIMIT_PER_MINUTE); 0 turns it off. */
  rateLimitPerMinute: number;
  /** Failed authentications per client address per minute (DROVER_AUTH_FAILURE_LIMIT_PER_MINUTE); default 0 (off). */
  authFailuresPerMinute?: number;
  /** Runner registrations per client address per minute (DROVER_REGISTER_LIMIT_PER_MINUTE); default 0 (off). */
  registerPerMinute?: number;
  /** PostgreSQL: how often rate-limit counts are shared (default 200 ms). */
  rateLimitFlushMs?: number;
  /** Headers and body must arrive within this many ms, else 408 (default 30 s). */
  requestTimeoutMs?: number;
  /** Fastify's `trustProxy` (DROVER_TRUST_PROXY): whose X-Forwarded-For names the client address. */
  trustProxy?: boolean | string;
  /** Adds the process's own metrics (CPU, memory, event loop) to GET /metrics (drover serve does). */
  processMetrics?: boolean;
  /** A pino logger; tests run without one. */
  logger?: FastifyBaseLogger;
  /** The web dashboard's built assets, served at `/` (drover serve, unless DROVER_DASHBOARD=false); none: no dashboard. */
  dashboard?: DashboardAssets | null;
  /** How often an SSE stream sends `: keepalive` (default 15 s, docs/events.md). */
  eventKeepaliveMs?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    drover: { ctx: DomainContext; gateway: RunnerGateway; metrics: Metrics; events: EventHub };
  }
}

export const ORG_PREFIX = '/api/v1/ext/orgs/:org';

/**
 * The Fastify app over a runtime, without listening: HTTP only (parsing, authentication, routes,
 * rendering). Closing the app stops the runtime, after the requests in flight have finished.
 */
export async function createApp(runtime: Runtime, options: HttpOptions): Promise<FastifyInstance> {
  const { ctx, gateway, events, outputSignals, authenticator, credentialStreams } = runtime;
  const store = ctx.store;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // One line per request, written by our onResponse hook with secrets redacted.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: newRequestId,
    // Headers and body must arrive within the timeout (408 and the socket closed, not a slot held
    // open for as long as a client trickles bytes); Node checks every connection this often.
    requestTimeout: requestTimeoutMs,
    http: { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(requestTimeoutMs / 10))) },
    clientErrorHandler: clientErrorHandler(requestTimeoutMs),
    // While closing, requests on connections still open are served (with Connection: close), not
    // answered 503 in Fastify's own body: they are in flight as far as their client knows.
    return503OnClosing: false,
    trustProxy: options.trustProxy ?? false,
    // `request.log` is the app's logger itself, not a child made for every request: log lines
    // name the request with an explicit `reqId`.
    childLoggerFactory: (logger) => logger,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    schemaController: { compilersFactory: { buildSerializer } },
    // Errors raised before routing (a malformed URL, an over-long path parameter) get the same body.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(reply, request, toAppError(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Slow headers time out with the body (Node's default would give them 60 s).
  app.server.headersTimeout = requestTimeoutMs;
  answerNodeLevelRequests(app.server);

  // The listening address is read once, when listening starts: it cannot be read once closing has begun.
  let origin: string | null = null;
  app.addHook('onListen', (done) => {
    origin = app.listeningOrigin;
    done();
  });
  runtime.useOrigin(() => origin ?? app.listeningOrigin);
  const metrics = new Metrics(store, ctx.now, options.processMetrics ?? false);
  app.decorate('drover', { ctx, gateway, metrics, events });
  const eventStreams = new Set<SseStream>();
  // Event streams never finish on their own: they end when closing starts, so the server can close.
  app.addHook('preClose', (done) => {
    for (const stream of [...eventStreams]) stream.end();
    done();
  });
  // Stop accepting, let in-flight requests finish, then close runner links and record their
  // disconnects; the caller closes the store after app.close().
  const shutdown = new ShutdownOrder(app, () => gateway.close());
  app.addHook('onClose', async () => {
    await gateway.close();
    // Bounded: a socket still finishing its handshake must not hold the exit back.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2_000);
      app.websocketServer.close(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    await runtime.stop();
  });

  app.setValidatorCompiler(validatorCompiler);
  // Runner links are not cut when closing starts (the plugin's default): see ShutdownOrder.
  await app.register(websocket, { options: { maxPayload: 2 * 1024 * 1024 }, preClose: (done) => done() });
  for (const schema of [repositorySchemas.Repository, repositorySchemas.AdminRepository, repositorySchemas.MergeRequest]) app.addSchema(schema);
  registerErrorHandling(app);
  registerJsonBody(app);
  for (const schema of [ErrorBody, JsonValue, ticketSchemas.Ticket, ticketSchemas.TicketListItem, ticketSchemas.BoardTicket, adminSchemas.Org, adminSchemas.ApiKey, adminSchemas.User]) {
    app.addSchema(schema);
  }
  for (const schema of channelSchemas.SHARED_SCHEMAS) app.addSchema(schema);
  app.addSchema(Delivery);
  for (const schema of [podSchemas.PodListItem, podSchemas.Pod, podSchemas.RunnerPodItem, podSchemas.Runner, loopSchemas.Loop, loopSchemas.Run, loopSchemas.LoopRunFinishedEvent, loopSchemas.WebhookDelivery, CustomAgent, RunnerToken, OrgQuotas]) app.addSchema(schema);
  await registerOpenApi(app);

  // Routes that take no query parameters refuse unknown ones, like those that take some.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide && !route.schema.querystring) route.schema = { ...route.schema, querystring: NoQuery };
  });

  app.decorateRequest('principal', null as never);
  registerActors(app, '/api/v1/admin');
  // Plain callback hooks (not async) on every request: they cost no promise each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    shutdown.track(request, reply);
    const nul = nulInUrlError(request.url);
    // An unknown route (or method, such as QUERY) is 404 before anything else: no body is read.
    if (!nul && request.is404) {
      sendError(reply, request, new AppError('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`));
      return;
    }
    done(nul);
  });
  const logRequest = requestLogWriter(app.log);
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    logRequest({ reqId: request.id, method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(ms * 10) / 10 });
    metrics.observeRequest(request.method, request.is404 ? 'unmatched' : request.routeOptions.url!, reply.statusCode, ms);
    done();
  });

  const limits = await registerRateLimits(app, store, {
    perKeyPerMinute: options.rateLimitPerMinute,
    authFailuresPerMinute: options.authFailuresPerMinute ?? 0,
    registerPerMinute: options.registerPerMinute ?? 0,
    flushIntervalMs: options.rateLimitFlushMs,
  } satisfies RateLimitSettings);

  await app.register(healthRoutes(store));
  await app.register(async (operations) => {
    registerAdminAuth(operations, options.adminToken, limits);
    await operations.register(metricsRoutes(metrics));
  });

  await app.register(
    async (admin) => {
      registerAdminAuth(admin, options.adminToken, limits);
      await admin.register(adminRoutes(ctx));
      await admin.register(adminRepositoryRoutes(ctx));
      await admin.register(adminRunnerRoutes(ctx));
      await admin.register(adminAgentRoutes(ctx));
      await admin.register(adminOperationRoutes(ctx));
      await admin.register(adminPresetRoutes(ctx));
    },
    { prefix: '/api/v1/admin' },
  );
  await app.register(runnerLinkRoutes(ctx, gateway, limits), { prefix: '/api/v1/runner' });

  await app.register(
    async (orgScoped) => {
      registerOrgAuth(orgScoped, { authenticator, limits });
      registerIdempotency(orgScoped, ctx);
      await orgScoped.register(ticketRoutes(ctx));
      await orgScoped.register(channelRoutes(ctx));
      await orgScoped.register(repositoryRoutes(ctx));
      await orgScoped.register(podRoutes(ctx));
      await orgScoped.register(runnerRoutes(ctx));
      await orgScoped.register(usageRoutes(ctx));
      await orgScoped.register(loopRoutes(ctx));
      await orgScoped.register(loopDeliveryRoutes(ctx));
      await orgScoped.register(whoamiRoutes());
      await orgScoped.register(activityRoutes(ctx));
      await orgScoped.register(eventRoutes({ ctx, hub: events, outputSignals, keepaliveMs: options.eventKeepaliveMs ?? 15_000, streams: eventStreams, credentialStreams }));
    },
    { prefix: ORG_PREFIX },
  );
  // The spec's loops example uses /api/v1/orgs/{org}: the loop endpoints are served there too, identically.
  await app.register(
    async (legacyLoops) => {
      registerOrgAuth(legacyLoops, { authenticator, limits });
      registerIdempotency(legacyLoops, ctx);
      await legacyLoops.register(loopRoutes(ctx));
      await legacyLoops.register(loopDeliveryRoutes(ctx));
    },
    { prefix: '/api/v1/orgs/:org' },
  );

  await registerDocsUi(app);
  if (options.dashboard) await app.register(dashboardRoutes(options.dashboard));
  return app;
}
