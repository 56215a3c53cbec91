/**
 * The in-pod port that the Drover API and the egress proxy share (docs/runners.md "Network";
 * src/runner/network/expose.ts `proxyRequest`): each connection to the pod's Unix socket goes to
 * the proxy when its first request line is a proxy request (CONNECT, absolute form), else to the
 * API, with every byte it sent passed on. Runner side only (Unix sockets, no sandbox): the
 * sandboxed path is test/sandbox/network.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointRoom, proxyRequest } from '../../src/runner/network/expose.ts';

describe('proxyRequest', () => {
  const of = (text: string) => proxyRequest(Buffer.from(text, 'latin1'));

  it('tells a proxy request from an origin-form one, and waits while it cannot tell', () => {
    expect(of('CONNECT example.com:443 HTTP/1.1\r\n')).toBe(true);
    expect(of('GET http://example.com/ HTTP/1.1\r\n')).toBe(true);
    expect(of('POST http://10.0.0.1/x HTTP/1.1\r\n')).toBe(true);
    expect(of('GET /api/v1/health HTTP/1.1\r\n')).toBe(false);
    expect(of('OPTIONS * HTTP/1.1\r\n')).toBe(false);
    expect(of('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 abcdefgh')).toBe(false); // TLS
    expect(of('')).toBeNull();
    expect(of('CONN')).toBeNull();
    expect(of('CONNECT ')).toBeNull();
    expect(of('ABCDEFGHIJKLMNOPQRSTUVWXYZ')).toBe(false);
  });
});

describe('a shared in-pod port (EndpointRoom, Unix socket)', () => {
  let dir: string;
  let room: EndpointRoom;
  let api: http.Server;
  let proxy: http.Server;
  let socket: string;
  const seen: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-shared-bridge-'));
    api = http.createServer((req, res) => res.end(`api ${req.method} ${req.url}`));
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', () => resolve()));
    proxy = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.end(`proxy ${req.method} ${req.url}`);
    });
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
      seen.push(`CONNECT ${req.url}`);
      client.end('HTTP/1.1 200 Connection Established\r\n\r\n');
    });
    room = new EndpointRoom(path.join(dir, 'net'));
    await room.expose(41_100, { proxy, otherwise: { host: '127.0.0.1', port: (api.address() as net.AddressInfo).port } });
    socket = room.bridges[0].socket;
  });

  afterAll(async () => {
    await room.close();
    await new Promise((resolve) => api.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `parts` one after the other (each its own write) and reads until the connection ends. */
  const exchange = (parts: string[]) =>
    new Promise<string>((resolve, reject) => {
      const client = net.connect(socket);
      let text = '';
      client.on('data', (d) => (text += d.toString()));
      client.once('error', reject);
      client.once('close', () => resolve(text));
      const next = (i: number) => {
        if (i === parts.length) return;
        client.write(parts[i], () => setImmediate(() => next(i + 1)));
      };
      next(0);
    });

  it('an origin-form request reaches the API', async () => {
    const answer = await exchange(['GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('api GET /api/v1/ping');
  });

  it('CONNECT and an absolute-form request reach the proxy, also when the first line comes in pieces', async () => {
    expect(await exchange(['CON', 'NECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'])).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    const answer = await exchange(['G', 'ET http://example.com/a HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n']);
    expect(answer).toContain('proxy GET http://example.com/a');
    expect(seen).toEqual(['CONNECT example.com:443', 'GET http://example.com/a']);
  });

  it('a kept-alive proxy connection carries its later requests to the proxy too', async () => {
    seen.length = 0;
    const answer = await exchange([
      'GET http://example.com/1 HTTP/1.1\r\nHost: example.com\r\n\r\n',
      'GET http://example.com/2 HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n',
    ]);
    expect(answer).toContain('proxy GET http://example.com/1');
    expect(answer).toContain('proxy GET http://example.com/2');
    expect(seen).toEqual(['GET http://example.com/1', 'GET http://example.com/2']);
  });
});
