/**
 * The runner's link to the server: one WebSocket at a time to one of the server's URLs, moving on
 * to the next whenever a connection fails or is lost, with backoff and jitter; heartbeats while
 * open; a refusal for good (401 on the upgrade, the server's revoke close) ends it. What the link
 * carries is the daemon's business (./daemon.ts).
 */
import WebSocket from 'ws';
import { CLOSE_REVOKED, decodeServerMessage, encode, sendCoalesced, type RunnerBody, type ServerMessage } from '../protocol/runner-link.ts';

export interface ConnectionHooks {
  /** The runner's credential, for each connection's upgrade request. */
  credential(): string;
  /** A connection opened: the place for the hello and what was kept meanwhile. */
  opened(): void;
  heartbeat(): RunnerBody;
  message(message: ServerMessage): void;
  /** The server refused this runner for good; the connection stops reconnecting. */
  revoked(reason: string): void;
}

export class ServerConnection {
  private socket: WebSocket | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopped = false;
  /** The server (of `servers`) the current or next connection goes to. */
  private serverIndex = 0;
  /** Whether the runner has ever been welcomed, and when its last welcomed connection was lost. */
  private welcomedOnce = false;
  private lostAt: number | null = null;
  private lastConnectError: string | null = null;

  constructor(
    private readonly servers: string[],
    private readonly heartbeatMs: number,
    private readonly log: (line: string) => void,
    private readonly hooks: ConnectionHooks,
  ) {}

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Whether a connection exists (open or opening). */
  get exists(): boolean {
    return this.socket !== null;
  }

  /** Sends when open; answers whether it did. */
  send(message: RunnerBody): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    sendCoalesced(this.socket, encode(message));
    return true;
  }

  private get server(): string {
    return this.servers[this.serverIndex % this.servers.length];
  }

  connect(): void {
    if (this.stopped) return;
    const server = this.server;
    const url = server.replace(/^http/, 'ws') + '/api/v1/runner/connect';
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.hooks.credential()}` }, handshakeTimeout: 10_000 });
    this.socket = socket;
    let welcomed = false;
    this.lastConnectError = null;
    socket.on('open', () => {
      this.attempt = 0;
      this.hooks.opened();
      this.heartbeat = setInterval(() => this.send(this.hooks.heartbeat()), this.heartbeatMs);
    });
    socket.on('message', (data) => {
      const message = this.decode(String(data));
      if (message?.type === 'welcome' && !welcomed) {
        welcomed = true;
        this.announceConnected(server, message.runner_id);
      }
      if (message) this.hooks.message(message);
    });
    // The server answered the upgrade with an error instead of a link: 401 means this runner's
    // credential is refused for good (deleted or revoked), anything else may pass.
    socket.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body = (body + chunk).slice(0, 2000)));
      response.on('end', () => {
        let error = body;
        try {
          error = (JSON.parse(body) as { error?: string }).error ?? body;
        } catch {
          // not JSON: keep the text
        }
        if (status === 401) this.revoked(`the server refused this runner's credential (HTTP 401: ${error})`);
        else this.lastConnectError = `HTTP ${status}${error ? `: ${error.slice(0, 200)}` : ''}`;
        socket.terminate();
      });
    });
    socket.on('close', (code, reason) => {
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      if (this.socket === socket) this.socket = null;
      if (this.stopped) return;
      if (code === CLOSE_REVOKED) {
        this.revoked(`the server closed the link: ${String(reason) || 'this runner was deleted'}`);
        return;
      }
      // Whichever way it ended, the next attempt goes to the next server of the list.
      this.serverIndex = (this.serverIndex + 1) % this.servers.length;
      const delay = this.scheduleReconnect();
      const next = this.server === server ? '' : ` to ${this.server}`;
      if (welcomed) {
        this.lostAt = Date.now();
        this.log(`connection to ${server} lost (${describeClose(code, String(reason))}), reconnecting${next} in ${seconds(delay)}`);
      } else {
        this.log(`could not connect to ${server} (${this.lastConnectError ?? describeClose(code, String(reason))}); retrying${next} in ${seconds(delay)}`);
      }
    });
    socket.on('error', (error) => {
      this.lastConnectError ??= error.message;
    });
  }

  private announceConnected(server: string, runnerId: number): void {
    if (!this.welcomedOnce) this.log(`connected to ${server} as runner ${runnerId}`);
    else this.log(`reconnected to ${server} as runner ${runnerId}${this.lostAt === null ? '' : ` after ${seconds(Date.now() - this.lostAt)}`}`);
    this.welcomedOnce = true;
    this.lostAt = null;
  }

  /** The server refused this runner for good: no more reconnecting. */
  private revoked(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.hooks.revoked(reason);
  }

  /** Exponential backoff from 0.5 s to 30 s, with full jitter so a restarted server is not stampeded; returns the wait. */
  private scheduleReconnect(): number {
    const cap = Math.min(30_000, 500 * 2 ** Math.min(this.attempt, 6));
    this.attempt++;
    const delay = Math.random() * cap;
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
    return delay;
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1000, 'runner stopping');
        setTimeout(resolve, 2000).unref();
      });
    } else socket?.terminate();
  }

  private decode(raw: string): ServerMessage | null {
    try {
      return decodeServerMessage(raw);
    } catch (error) {
      this.log(`ignoring a message from the server: ${(error as Error).message}`);
      return null;
    }
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function describeClose(code: number, reason: string): string {
  if (code === 1006) return 'closed abnormally';
  return `code ${code}${reason ? `: ${reason}` : ''}`;
}
