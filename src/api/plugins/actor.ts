import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Principal } from '../../domain/auth/authenticate.ts';
import { ADMIN_ACTOR, actingAs, podActor, type Actor } from '../../events/actor.ts';

/** The actor a credential stands for: its person if the key has one, else the key, or the pod of a pod token. */
export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'pod') return podActor(principal.podKey);
  if (principal.user) return { type: 'user', id: principal.user.id, name: principal.user.name };
  return { type: 'api_key', id: principal.keyId, name: principal.keyName };
}

function requestActor(request: FastifyRequest, admin: boolean): Actor | null {
  if (admin) return ADMIN_ACTOR;
  return (request.principal as Principal | null) ? actorOf(request.principal) : null;
}

/**
 * Every route handler runs as its caller's actor, so whatever it changes records who did it
 * (events/actor.ts). Routes under `adminPrefix` act as the admin token; routes without a credential
 * (health, the runner link) act as the server.
 */
export function registerActors(app: FastifyInstance, adminPrefix: string): void {
  app.addHook('onRoute', (route) => {
    if (route.websocket) return;
    const handler = route.handler as RouteHandlerMethod;
    const admin = route.url.startsWith(adminPrefix);
    route.handler = function actorScoped(this: FastifyInstance, request, reply) {
      const actor = requestActor(request, admin);
      return actor ? actingAs(actor, () => handler.call(this, request, reply)) : handler.call(this, request, reply);
    } as RouteHandlerMethod;
  });
}
