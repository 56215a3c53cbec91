import type { FastifyInstance } from 'fastify';
import { createApp, type HttpOptions } from '../app.ts';
import { Runtime, type RuntimeOptions } from './runtime.ts';

export type AppOptions = RuntimeOptions & HttpOptions;

/**
 * A runtime and its HTTP app, started; `app.close()` stops both. The tests build their servers
 * with it; `drover serve` (server.ts) builds the same two parts with its background loops.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const runtime = new Runtime(options);
  const app = await createApp(runtime, options);
  try {
    await runtime.start();
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}
