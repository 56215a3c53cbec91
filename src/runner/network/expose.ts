import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

/**
 * How a runner-side endpoint shows up inside a pod's network namespace (docs/runners.md
 * "Network"): `127.0.0.1:<port>` in the pod is an in-pod
 * `socat` listener that passes each connection to a Unix socket in the pod's network directory,
 * served here by the runner. This is the one way in: the Drover API, the operator's loopback
 * services and the egress proxy all come through it, and so does anything else the runner wants
 * to offer a pod (a model relay: pass a handler).
 */
export type EndpointTarget =
  /** Each connection is piped to this TCP address, over TLS when `tls` (then `servername` is checked). */
  | { host: string; port: number; tls?: { servername: string } }
  /** Each connection is given to this handler (e.g. `(socket) => httpServer.emit('connection', socket)`). */
  | ((socket: net.Socket) => void)
  /**
   * One port for an HTTP proxy and another service, told apart by each connection's first
   * request line (`proxyRequest`): a proxy request goes to `proxy`, anything else to `otherwise`.
   */
  | { proxy: net.Server; otherwise: EndpointTarget };

/** How many bytes at most are read to tell a proxy request from another (the method and one more). */
const SNIFF_BYTES = 18;

/**
 * Whether a connection that starts with `head` is an HTTP proxy request: `CONNECT host:port`, or a
 * request in absolute form (`GET http://host/…`); not one in origin form (`GET /…`, what a client
 * sends to the server it talks to, e.g. the Drover API), nor anything that is not HTTP (TLS). Null
 * while `head` is too short to tell. docs/runners.md "Network".
 */
export function proxyRequest(head: Buffer): boolean | null {
  const text = head.toString('latin1', 0, SNIFF_BYTES);
  const line = /^([A-Z]{1,16}) ([^\r\n])/.exec(text);
  if (line) return line[1] === 'CONNECT' || /[A-Za-z]/.test(line[2]);
  return /^[A-Z]{0,16} ?$/.test(text) ? null : false;
}

/** One endpoint: its in-pod port and the Unix socket behind it. */
export interface Bridge {
  port: number;
  socket: string;
}

export class EndpointRoom {
  readonly bridges: Bridge[] = [];
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();

  /** `dir`: the pod's network directory (made here, bound into the sandbox read-only). */
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  }

  has(port: number): boolean {
    return this.bridges.some((b) => b.port === port);
  }

  /** A port of 1024 and up that no endpoint of this pod uses yet, starting at `from`. */
  freePort(from: number, taken: readonly number[] = []): number {
    let port = from;
    while (this.has(port) || taken.includes(port)) port++;
    return port;
  }

  /**
   * Serves `target` at `http://127.0.0.1:<port>` (any TCP protocol) inside the pod. Must be called
   * before the pod's agent starts: the in-pod listeners are started with it, and the agent only
   * once they all listen.
   */
  async expose(port: number, target: EndpointTarget | net.Server): Promise<void> {
    if (this.has(port)) throw new Error(`port ${port} is already exposed in this pod`);
    const socket = path.join(this.dir, `${port}.sock`);
    const server = target instanceof net.Server ? target : net.createServer((client) => this.connect(client, target));
    server.on('connection', (client: net.Socket) => {
      this.sockets.add(client);
      client.once('close', () => this.sockets.delete(client));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // The agent's uid maps to no owner of this file: it connects as "other".
    fs.chmodSync(socket, 0o666);
    this.servers.push(server);
    this.bridges.push({ port, socket });
  }

  private connect(client: net.Socket, target: EndpointTarget): void {
    client.on('error', () => client.destroy());
    if (typeof target === 'function') {
      target(client);
      return;
    }
    if ('proxy' in target) {
      this.sniff(client, (isProxy) => {
        if (!isProxy) return this.connect(client, target.otherwise);
        target.proxy.emit('connection', client);
        client.resume(); // an HTTP server reads a socket it is given only once it flows
      });
      return;
    }
    const upstream = target.tls
      ? tls.connect({ host: target.host, port: target.port, servername: target.tls.servername })
      : net.connect({ host: target.host, port: target.port });
    this.sockets.add(upstream);
    upstream.once('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Reads the first bytes of `client`, puts them back, and passes on whether it is a proxy request. */
  private sniff(client: net.Socket, then: (isProxy: boolean) => void): void {
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const isProxy = proxyRequest(head);
      if (isProxy === null) return;
      client.off('data', onData);
      client.off('end', onEnd);
      client.pause();
      client.unshift(head);
      then(isProxy);
    };
    const onEnd = () => client.destroy(); // closed before it said anything
    client.on('data', onData);
    client.once('end', onEnd);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The command that runs `command args` once every bridge listens: one `socat` per endpoint, all
 * started at once, each told (`-d -d`) to report its `listening on` notice on a pipe the shell
 * reads; the agent is `exec`ed as soon as every bridge has reported, with no polling (reading
 * /proc/net/tcp byte by byte cost ~10 ms a check on a loaded machine: docs/runners.md "Network").
 * The read end closes then: socat ignores SIGPIPE, so its later notices are dropped. A bridge that
 * cannot listen (its port taken) reports an error line instead, which fails the start at once.
 * No Node process starts in the pod for this: the cost is one socat exec per endpoint.
 */
export function bridgedCommand(socat: string, bridges: readonly Bridge[], command: string, args: readonly string[]): { command: string; args: string[] } {
  if (bridges.length === 0) return { command, args: [...args] };
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const starts = bridges.map((b) => `${quote(socat)} -d -d TCP4-LISTEN:${b.port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${quote(b.socket)} 2>&1 >/dev/null &`);
  const lines = [
    `{ ${starts.join(' ')} } | {`,
    '  n=0',
    `  while [ $n -lt ${bridges.length} ] && read -r line; do`,
    '    case $line in',
    '      *"] N listening on "*) n=$((n + 1)) ;;',
    `      *"] E "*) echo "[drover] network: an in-pod bridge did not start: \${line#*] E }" >&2; exit 125 ;;`,
    '    esac',
    '  done',
    `  [ $n -eq ${bridges.length} ] || { echo '[drover] network: the in-pod bridges did not start' >&2; exit 125; }`,
    '} || exit 125',
    'exec "$@"',
  ];
  return { command: '/bin/sh', args: ['-c', lines.join('\n'), 'drover-net', command, ...args] };
}
