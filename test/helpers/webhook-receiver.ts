/**
 * A Standard Webhooks receiver for tests: a real `node:http` server on loopback that checks every
 * request with the `standardwebhooks` package (`new Webhook(secret).verify(body, headers)`),
 * records it, and answers what the test's `reply` says for that request.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, recorded once its body has arrived. */
export interface WebhookHit {
  /** `Date.now()` when the body had arrived. */
  at: number;
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The `webhook-id` header. */
  webhookId: string;
  /** The `webhook-timestamp` header (Unix seconds). */
  timestamp: string;
  /** null when the signature verified with the receiver's secret at arrival, else the package's reason. */
  verifyError: string | null;
}

/** A status (alone, or with headers such as a redirect's `location`), or `'hang'`: never answer. */
export type WebhookReply = number | { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiverOptions {
  /** What requests are verified with; may be set later on the receiver (default '': nothing verifies). */
  secret?: string;
  /** The answer to the n-th request (from 1); default 200. */
  reply?: (hit: WebhookHit, n: number) => WebhookReply;
  /** Default 127.0.0.1; an IPv6 address (`::1`) is bracketed in `url`. */
  host?: string;
  /** Default 0: a random free port. */
  port?: number;
  /** The path of `url`; default `/hook`. */
  path?: string;
}

export interface WebhookReceiver {
  host: string;
  port: number;
  /** `http://<host>:<port><path>`. */
  url: string;
  /** Read at each request's arrival, so a test can set it once it knows it. */
  secret: string;
  hits: WebhookHit[];
  /** TCP connections accepted, whether or not a request followed. */
  readonly connections: number;
  /** How many requests came with this `webhook-id`. */
  hitsFor(webhookId: string): number;
  /** Destroys open connections (a hanging request too) and stops listening; closing twice is fine. */
  close(): Promise<void>;
}

/** Starts a receiver; the caller closes it. */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const host = options.host ?? '127.0.0.1';
  const reply = options.reply ?? (() => 200);
  const hits: WebhookHit[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verifyError: string | null = null;
      try {
        new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
      } catch (error) {
        verifyError = (error as Error).message;
      }
      const hit: WebhookHit = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        webhookId: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        verifyError,
      };
      hits.push(hit);
      const answer = reply(hit, hits.length);
      if (answer === 'hang') return;
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: undefined } : answer;
      res.writeHead(status, headers).end();
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, host, () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const receiver: WebhookReceiver = {
    host,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${options.path ?? '/hook'}`,
    secret: options.secret ?? '',
    hits,
    get connections() {
      return connections;
    },
    hitsFor: (webhookId) => hits.filter((hit) => hit.webhookId === webhookId).length,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
