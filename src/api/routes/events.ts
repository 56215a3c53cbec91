import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { grants, type Scope } from '../../protocol/scopes.ts';
import { canonicalSlug } from '../../domain/tickets/model.ts';
import type { EventHub } from '../../events/hub.ts';
import type { PodOutputSignals } from '../../events/output-signals.ts';
import { streamPodOutput } from '../../events/output-stream.ts';
import { getPod } from '../../domain/pods/service.ts';
import type { DomainContext } from '../../domain/context.ts';
import type { CredentialStreams } from '../../domain/auth/credential-streams.ts';
import { EVENT_SCOPES, EVENT_TYPES, expandTypes, type EventType } from '../../protocol/event-types.ts';
import { AppError, invalid } from '../../errors.ts';
import type { EventRow } from '../../store/schema.ts';
import { errorResponses, OrgParams } from '../schemas/common.ts';
import { PodParams } from '../schemas/pods.ts';
import { EventsHeaders, EventsQuery, OutputStreamQuery, eventStreamResponse } from '../schemas/events.ts';
import { openSse, type SseStream } from '../sse.ts';

const READ_SCOPES = [...new Set(Object.values(EVENT_SCOPES))] as Scope[];

export interface EventRouteOptions {
  ctx: DomainContext;
  hub: EventHub;
  outputSignals: PodOutputSignals;
  keepaliveMs: number;
  streams: Set<SseStream>;
  /** Caps the streams per credential and organization, and ends them when their credential stops working. */
  credentialStreams: CredentialStreams;
}

/** The types asked for (all the key may receive when none), or 400 / 403. */
export function chosenTypes(raw: string | undefined, scopes: readonly string[]): Set<EventType> {
  if (raw === undefined) return new Set(EVENT_TYPES.filter((type) => grants(scopes, EVENT_SCOPES[type])));
  const names = raw.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
  if (names.length === 0) throw invalid('types', 'must name at least one event type');
  const { types, unknown } = expandTypes(names);
  if (unknown.length > 0) throw invalid('types', `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')}, or family.*)`);
  const missing = [...new Set(types.map((type) => EVENT_SCOPES[type]).filter((scope) => !grants(scopes, scope)))];
  if (missing.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `this API key lacks the ${missing.join(', ')} scope${missing.length > 1 ? 's' : ''} for the types asked for`, { required_scopes: missing });
  return new Set(types);
}

export const eventRoutes = (options: EventRouteOptions): FastifyPluginAsyncTypebox =>
  async function events(app) {
    /** An SSE answer held by the request's credential: 429 TOO_MANY_STREAMS beyond the caps, ended with the credential. */
    const openStream = (request: FastifyRequest, reply: FastifyReply): SseStream =>
      options.credentialStreams.open(request.principal, () => openSse(request, reply, options.keepaliveMs, options.streams));

    app.get(
      '/events',
      {
        config: { anyScope: READ_SCOPES },
        schema: {
          tags: ['Events'],
          operationId: 'streamEvents',
          summary: 'The organization’s live event stream (Server-Sent Events), resumable with Last-Event-ID',
          description:
            'Each event: `id:` (increasing per organization), `event:` (its type) and `data:` one JSON line ' +
            '`{"id","type","created_at","data"}`, `data` holding the resource as the API shows it under its name (`{"ticket": {…}}`, ' +
            '`{"pod": {…}}`, `{"run": {…}}`: the first word of the type). A `: keepalive` comment every 15 s. ' +
            'With Last-Event-ID (or last_event_id) the kept events after that id are replayed first; an id older than what is kept ' +
            '(DROVER_EVENT_RETENTION_HOURS) gets one `reset` event instead. Each type needs its resource’s read scope.',
          params: OrgParams,
          headers: EventsHeaders,
          querystring: EventsQuery,
          response: { 200: eventStreamResponse('An endless text/event-stream of the organization’s events'), ...errorResponses() },
        },
      },
      async (request, reply) => {
        const { query } = request;
        const types = chosenTypes(query.types, request.principal.scopes);
        const header = request.headers['last-event-id'];
        const asked = header !== undefined ? Number(header) : (query.last_event_id ?? null);
        const orgId = request.principal.org.id;
        // Without a Last-Event-ID the stream starts at the newest event as of now, read before the
        // headers go out: a client that acts once it sees them gets the events of what it did.
        const after = asked ?? (await options.hub.latestId(orgId));
        const ticketSlug = query.ticket_slug === undefined ? undefined : canonicalSlug(query.ticket_slug);
        const wants = (event: EventRow) =>
          types.has(event.type as EventType) &&
          (query.channel_id === undefined || Number(event.channel_id) === query.channel_id) &&
          (query.pod_key === undefined || event.pod_key === query.pod_key) &&
          (query.loop_slug === undefined || event.loop_slug === query.loop_slug) &&
          (ticketSlug === undefined || event.ticket_slug === ticketSlug);
        const stream = openStream(request, reply);
        try {
          const subscriber = {
            filterKey: JSON.stringify([[...types].sort(), query.channel_id, query.pod_key, query.loop_slug, ticketSlug]),
            wants,
            write: (frames: Uint8Array) => stream.write(frames),
            onDrain: (listener: () => void) => stream.onDrain(listener),
            end: () => stream.end(),
          };
          const subscription = await options.hub.subscribe(orgId, after, subscriber, (liveFrom) => {
            const line = JSON.stringify({ id: liveFrom, type: 'reset', created_at: new Date().toISOString(), data: { last_event_id: asked, resumed_after: liveFrom } });
            stream.write(`id: ${liveFrom}\nevent: reset\ndata: ${line}\n\n`);
          });
          stream.onClose(() => subscription.close());
        } catch (error) {
          request.log.error({ err: error, reqId: request.id }, 'event stream failed');
          stream.end();
        }
      },
    );

    app.get(
      '/pods/:key/output/stream',
      {
        config: { scope: 'pods:read' },
        schema: {
          tags: ['Pods'],
          operationId: 'streamPodOutput',
          summary: "The agent's output as Server-Sent Events, live while the pod runs",
          description:
            '`output` events `{"offset","data"}` (`offset`: the byte offset of `data` in the whole output) from byte `offset` ' +
            '(default 0; clamped to what is kept, the last 1 MiB), live while the pod runs; then one `end` event ' +
            '`{"status","exit_code"}` and the stream closes.',
          params: PodParams,
          querystring: OutputStreamQuery,
          response: { 200: eventStreamResponse("The pod's output, then its end"), ...errorResponses() },
        },
      },
      async (request, reply) => {
        const pod = await getPod(options.ctx, request.principal.org.id, request.params.key);
        const stream = openStream(request, reply);
        try {
          await streamPodOutput(options.ctx.store, options.outputSignals, pod, request.query.offset ?? 0, {
            write: (frame) => stream.write(frame),
            drained: () => stream.drained(),
            get closed() {
              return stream.closed;
            },
            onClose: (listener) => stream.onClose(listener),
          });
        } catch (error) {
          request.log.error({ err: error, reqId: request.id }, 'output stream failed');
        }
        stream.end();
      },
    );
  };
