import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { UNRESOLVED, decide, type NetworkPolicy } from './policy.ts';

/**
 * The egress proxy of one pod (docs/runners.md "Network"): HTTP CONNECT tunnels and plain-HTTP
 * forwarding, served on a Unix socket that the pod reaches through its in-pod bridge. Every
 * target is decided by the pod's policy after resolution; what is refused is reported once per
 * `host:port` through `onRefused` (and counted every time).
 */
export interface ProxyEvents {
  onRefused(host: string, port: number, first: boolean): void;
}

const CONNECT_TIMEOUT_MS = 15_000;

function splitAuthority(authority: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+)(?::([0-9]{1,5}))?$/.exec(authority);
  if (!m) return null;
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

function reject(socket: Duplex, status: string, text: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
}

export class PodProxy {
  /** Served by the pod's EndpointRoom (./expose.ts) on its Unix socket. */
  readonly server: http.Server;
  private readonly refusedOnce = new Set<string>();
  private readonly sockets = new Set<Duplex>();

  constructor(
    private readonly policy: NetworkPolicy,
    private readonly events: ProxyEvents,
  ) {
    this.server = http.createServer((req, res) => void this.forward(req, res));
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head));
    this.server.on('connection', (socket: net.Socket) => this.track(socket));
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  /** Ends every tunnel and forwarded request (the server itself is closed by its room). */
  destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private refused(host: string, port: number): void {
    const key = `${host}:${port}`;
    const first = !this.refusedOnce.has(key);
    this.refusedOnce.add(key);
    this.events.onRefused(host, port, first);
  }

  private async tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitAuthority(req.url ?? '', 443);
    if (!target) return reject(client, '400 Bad Request', 'CONNECT needs host:port\n');
    const verdict = await decide(this.policy, target.host, target.port);
    if (!verdict.ok && verdict.reason === UNRESOLVED) return reject(client, '502 Bad Gateway', `drover: ${target.host} does not resolve\n`);
    if (!verdict.ok) {
      this.refused(target.host.toLowerCase(), target.port);
      return reject(client, '403 Forbidden', `drover: ${target.host}:${target.port} is not allowed (${verdict.reason})\n`);
    }
    const upstream = net.connect({ host: verdict.address, port: target.port, family: verdict.family, timeout: CONNECT_TIMEOUT_MS });
    this.track(upstream);
    upstream.once('timeout', () => upstream.destroy(new Error('timeout')));
    upstream.once('error', (error) => {
      if (upstream.readyState === 'opening' || !upstream.remoteAddress) reject(client, '502 Bad Gateway', `drover: ${target.host}:${target.port}: ${error.message}\n`);
      else client.destroy();
    });
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('drover: a proxy request needs an absolute http:// URL\n');
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('drover: only http:// is forwarded; use CONNECT for https\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    const verdict = await decide(this.policy, url.hostname, port);
    if (!verdict.ok && verdict.reason === UNRESOLVED) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`drover: ${url.hostname} does not resolve\n`);
      return;
    }
    if (!verdict.ok) {
      this.refused(url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`drover: ${url.hostname}:${port} is not allowed (${verdict.reason})\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const name of Object.keys(headers)) if (name.startsWith('proxy-')) delete headers[name];
    const upstream = http.request({ host: verdict.address, family: verdict.family, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
    upstream.once('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.once('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`drover: ${url.host}: ${error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}
