import type { FastifyRequest } from 'fastify';

/** For routes whose JSON body is optional: no body at all is validated as `{}`. */
export const optionalBody = async (request: FastifyRequest): Promise<void> => {
  if (request.body === undefined) request.body = {};
};
