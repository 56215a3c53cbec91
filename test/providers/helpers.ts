/**
 * A stand-in for a Git provider: a node:http server on 127.0.0.1 (random port) whose
 * behaviour each test sets with `mock.handle(...)`, recording every request it receives.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { ProviderError } from '../../src/domain/repositories/providers/index.ts';

export interface Recorded {
  method: string;
  /** Path and query exactly as sent (percent-encoding kept). */
  url: string;
  headers: IncomingHttpHeaders;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export interface MockProvider {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: Recorded[];
  handle(handler: Handler): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startMockProvider(): Promise<MockProvider> {
  let handler: Handler = (_req, res) => json(res, 500, { message: 'no handler' });
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res, new URL(req.url ?? '/', 'http://mock'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    handle(h) {
      handler = h;
    },
    reset() {
      requests.length = 0;
      handler = (_req, res) => json(res, 500, { message: 'no handler' });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // including requests a test left hanging on purpose
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** Awaits a promise expected to fail with a ProviderError and returns that error. */
export async function providerError(p: Promise<unknown>): Promise<ProviderError> {
  const err: unknown = await p.then(
    () => {
      throw new Error('expected a ProviderError, got success');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

/** Leaves a request unanswered (the server is closed with closeAllConnections at the end). */
export const hang: Handler = () => {};
