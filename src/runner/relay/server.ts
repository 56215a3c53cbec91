/**
 * The model relay of a runner (docs/agents.md "The model relay"): one HTTP server on the runner
 * that every pod's agent calls instead of its model provider. It finds the pod by the placeholder
 * key the call carries, refuses the call once a budget of the pod is reached, puts the real key on
 * the outgoing request, passes the answer through as it comes (streams unbuffered), and reads the
 * call's usage from the answer on the way.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { modelProvider, type ModelProviderId } from '../../agents/model-providers.ts';
import { CallbackTargetError } from '../../net/address-guard.ts';
import { PassedAnswer } from './answer.ts';
import { sendProviderError } from './errors.ts';
import { budgetReached, PLACEHOLDER_PREFIX, RelayPods, type RelayedPod } from './pods.ts';
import type { PriceTable } from './pricing.ts';
import { prepareBody } from './request.ts';
import { UpstreamAddresses, type CheckedUpstream } from './upstreams.ts';
import { UsageReader, type CallUsage } from './usage.ts';

/** One model call the relay passed, with its usage and cost (null: no price known for its model). */
export interface RelayCall extends CallUsage {
  id: string;
  pod_key: string;
  provider: ModelProviderId;
  cost_usd: number | null;
  at: number;
}

export interface RelayHooks {
  /** A call ended and its usage was read. */
  call(call: RelayCall): void;
  /** The pod reached a budget: it is to end failed with this message (called once per pod). */
  budgetReached(podKey: string, message: string): void;
  /**
   * Whether the runner's operator allows this upstream `host:port` although it is on the runner
   * machine's loopback or a private address (`--allow-host`); any other such upstream is refused.
   */
  upstreamAllowed(host: string, port: number): boolean;
}

const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** Not passed on: they belong to one connection, or the relay sets them itself. */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'accept-encoding']);
const KEY_HEADERS = ['x-api-key', 'x-goog-api-key'] as const;

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

export class ModelRelay {
  readonly pods = new RelayPods();
  private readonly server: http.Server;
  private readonly refused = new Set<string>();
  private readonly upstreams = new UpstreamAddresses();

  constructor(
    private readonly prices: PriceTable,
    private readonly hooks: RelayHooks,
  ) {
    // Agents keep their connection to the relay while their tools run: idle ones are kept a minute
    // (Node's default, 5 s, races with an agent's next call on the same connection).
    this.server = http.createServer({ noDelay: true, keepAliveTimeout: 65_000, headersTimeout: 70_000 }, (req, res) => void this.handle(req, res));
  }

  async listen(host = '127.0.0.1', port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Serves a connection that reached the relay another way (a pod's exposed endpoint, docs/runners.md). */
  accept(socket: Duplex): void {
    this.server.emit('connection', socket);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay');
    const [, first, ...rest] = url.pathname.split('/');
    const provider = modelProvider(first ?? '')?.id ?? null;
    if (!provider) return sendProviderError(res, null, 404, 'the Drover model relay serves /anthropic, /openai and /gemini');
    const found = this.credentialOf(req, url);
    if (!found || found.provider !== provider) {
      return sendProviderError(res, provider, 401, 'the Drover model relay knows no such key: use the placeholder the pod was given, while the pod runs');
    }
    const { pod, value } = found;
    const reached = pod.reached ?? budgetReached(pod);
    if (reached) {
      pod.reached = reached;
      if (!this.refused.has(pod.key)) {
        this.refused.add(pod.key);
        this.hooks.budgetReached(pod.key, reached);
      }
      return sendProviderError(res, provider, 429, `Drover ${reached}`);
    }
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return sendProviderError(res, provider, 413, `the request is over ${MAX_REQUEST_BYTES} bytes`);
    }
    const { forwarded, model } = prepareBody(provider, url.pathname, body, req.headers['content-type']);
    const target = new URL(`${pod.upstreams.get(provider)}/${rest.join('/')}`);
    for (const [name, v] of url.searchParams) target.searchParams.append(name, name === 'key' && v.startsWith(PLACEHOLDER_PREFIX) ? value : v);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(name) && v !== undefined) headers[name] = v;
    for (const name of KEY_HEADERS) if (typeof headers[name] === 'string' && headers[name].startsWith(PLACEHOLDER_PREFIX)) headers[name] = value;
    if (typeof headers.authorization === 'string' && headers.authorization.startsWith(`Bearer ${PLACEHOLDER_PREFIX}`)) headers.authorization = `Bearer ${value}`;
    // Usage is read from the answer: it must come uncompressed.
    headers['accept-encoding'] = 'identity';
    if (forwarded.length > 0 || req.method === 'POST') headers['content-length'] = forwarded.length;
    // An ENV base URL is the pod's to choose: the relay must not become its way to the runner
    // machine's own or private services (docs/runners.md "Network").
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const allowed = this.hooks.upstreamAllowed(host, port);
    let address = this.upstreams.kept(target, allowed);
    if (address === undefined) {
      try {
        address = await this.upstreams.resolve(target, allowed);
      } catch (error) {
        const why = error instanceof CallbackTargetError ? error.message : String(error);
        return sendProviderError(res, provider, 403, `the Drover model relay refuses the upstream ${host}:${port}: ${why.replace('DROVER_WEBHOOK_ALLOW_PRIVATE=true', "the runner's --allow-host")}`);
      }
    }
    this.forward(pod, provider, model, target, address, req, res, headers, forwarded);
  }

  private forward(
    pod: RelayedPod,
    provider: ModelProviderId,
    model: string | null,
    target: URL,
    address: CheckedUpstream,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    headers: http.OutgoingHttpHeaders,
    body: Buffer,
    attempt = 1,
  ): void {
    const secure = target.protocol === 'https:';
    // Connects to the address that was checked, so a second DNS answer cannot swap in another one.
    const { lookup } = address;
    const upstream = (secure ? https : http).request(target, { method: req.method, headers, agent: secure ? agents.https : agents.http, lookup }, (answer) => {
      const streamed = String(answer.headers['content-type'] ?? '').includes('text/event-stream');
      const reader = answer.statusCode !== undefined && answer.statusCode < 400 ? new UsageReader(provider, streamed, model) : null;
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, v] of Object.entries(answer.headers)) if (!HOP_HEADERS.has(name) && v !== undefined) out[name] = v;
      if (answer.headers['content-length'] !== undefined) out['content-length'] = answer.headers['content-length'];
      res.writeHead(answer.statusCode ?? 502, out);
      new PassedAnswer(answer, res, reader, (usage) => {
        if (usage) this.record(pod, provider, usage);
      });
    });
    upstream.on('error', (error) => {
      // A kept-alive connection that the upstream had closed is reset before any answer: the call
      // is sent once more, on a new connection (Node's advice for reused sockets).
      const reset = (error as NodeJS.ErrnoException).code === 'ECONNRESET';
      if (reset && upstream.reusedSocket && attempt === 1 && !res.headersSent && !res.destroyed) {
        this.forward(pod, provider, model, target, address, req, res, headers, body, attempt + 1);
        return;
      }
      this.upstreams.forget(target);
      sendProviderError(res, provider, 502, `the Drover model relay could not reach ${target.origin}: ${error.message}`);
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }

  private record(pod: RelayedPod, provider: ModelProviderId, usage: CallUsage): void {
    const cost = this.prices.cost(provider, usage);
    if (cost !== null) pod.spentUsd += cost;
    this.hooks.call({ id: crypto.randomUUID(), pod_key: pod.key, provider, ...usage, cost_usd: cost, at: Date.now() });
  }

  private credentialOf(req: http.IncomingMessage, url: URL) {
    const candidates = [req.headers['x-api-key'], req.headers['x-goog-api-key'], url.searchParams.get('key')];
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) candidates.push(auth.slice(7).trim());
    for (const candidate of candidates) {
      if (typeof candidate !== 'string' || !candidate.startsWith(PLACEHOLDER_PREFIX)) continue;
      const found = this.pods.find(candidate);
      if (found) return found;
    }
    return null;
  }

  /** Forgets a pod that has ended: its placeholders are worthless from now on. */
  detach(key: string): void {
    this.pods.detach(key);
    this.refused.delete(key);
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(new Error('too large'));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
