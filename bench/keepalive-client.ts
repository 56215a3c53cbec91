/**
 * A lean HTTP/1.1 client for load: one keep-alive connection, one request at a time, the request
 * written by hand and the answer read by its `content-length`. `fetch` costs this machine about
 * 0.7 ms of CPU per request (its streams and promises), as much as the server spends answering;
 * where the bench shares the machine with what it measures, that CPU is taken from the server.
 * This costs a fraction of it. It handles what Drover answers (a status line, headers with
 * `content-length`, a body), nothing more: no chunked answers, no redirects.
 */
import net from 'node:net';

export interface KeepAliveAnswer {
  status: number;
  body: string;
}

export class KeepAliveConnection {
  private readonly socket: net.Socket;
  private readonly ready: Promise<void>;
  private pending: { resolve: (answer: KeepAliveAnswer) => void; reject: (error: Error) => void } | null = null;
  private received: Buffer = Buffer.alloc(0);

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
  ) {
    this.socket = net.connect(Number(url.port), url.hostname);
    this.socket.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Sends one request with a JSON body (or none) and resolves with the answer. */
  async request(method: string, path: string, json?: unknown): Promise<KeepAliveAnswer> {
    await this.ready;
    if (this.pending) throw new Error('one request at a time on a connection');
    const body = json === undefined ? '' : JSON.stringify(json);
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.url.host}\r\n`;
    for (const [name, value] of Object.entries(this.headers)) head += `${name}: ${value}\r\n`;
    if (json !== undefined) head += 'content-type: application/json\r\n';
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(head + body);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    const headEnd = this.received.indexOf('\r\n\r\n');
    if (headEnd === -1 || !this.pending) return;
    const head = this.received.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return this.fail(new Error(`an answer without content-length: ${head.slice(0, 200)}`));
    const end = headEnd + 4 + Number(length[1]);
    if (this.received.length < end) return;
    const answer = { status: Number(head.slice(9, 12)), body: this.received.toString('utf8', headEnd + 4, end) };
    this.received = this.received.subarray(end);
    const { resolve } = this.pending;
    this.pending = null;
    resolve(answer);
  }

  private fail(error: Error): void {
    const pending = this.pending;
    this.pending = null;
    pending?.reject(error);
  }
}

/** Keep-alive connections to one server, as many as requests in flight at once: an idle one is reused. */
export class KeepAlivePool {
  private readonly idle: KeepAliveConnection[] = [];
  private readonly all: KeepAliveConnection[] = [];

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
  ) {}

  async request(method: string, path: string, json?: unknown): Promise<KeepAliveAnswer> {
    let connection = this.idle.pop();
    if (!connection) this.all.push((connection = new KeepAliveConnection(this.url, this.headers)));
    const answer = await connection.request(method, path, json);
    this.idle.push(connection);
    return answer;
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }
}
