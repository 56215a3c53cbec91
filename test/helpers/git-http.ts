/**
 * A git server over HTTP for tests: `git http-backend` run as CGI by a tiny node:http server over
 * a directory of bare repositories, answering 401 (with WWW-Authenticate) unless the request
 * carries the expected Basic credentials, the way Drover sends a token (`x-access-token:<token>`).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';

/** The Authorization header a token travels in. */
export const basicAuth = (token: string): string => `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

export interface GitHttpOptions {
  /** The directory whose bare repositories are served (GIT_PROJECT_ROOT). */
  root: () => string;
  /** The token a request must carry. */
  token: string;
  /** Sees every request first (to record what came). */
  onRequest?: (req: http.IncomingMessage) => void;
}

export function gitHttpServer(options: GitHttpOptions): http.Server {
  const expected = basicAuth(options.token);
  return http.createServer((req, res) => {
    options.onRequest?.(req);
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"', 'Content-Type': 'text/plain' });
      res.end('Unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://cgi');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: options.root(),
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: os.devNull,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: '127.0.0.1',
      REMOTE_USER: 'x-access-token',
    };
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (req.headers['git-protocol']) env.HTTP_GIT_PROTOCOL = String(req.headers['git-protocol']);
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf('\r\n\r\n');
      const sep = crlf >= 0 ? crlf : head.indexOf('\n\n');
      if (sep < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, sep).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i <= 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      headersDone = true;
      res.writeHead(status, headers);
      res.write(head.subarray(sep + (crlf >= 0 ? 4 : 2)));
    });
    cgi.on('close', () => {
      if (!headersDone) res.writeHead(502);
      res.end();
    });
  });
}
