/**
 * A stand-in of the providers' REST APIs for pull/merge requests (GitHub, GitLab and Gitea
 * shapes), for tests of `CONFIG deliver = merge_request`: it answers only requests carrying
 * `token` as each provider expects it, and records every call.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderCall {
  provider: string;
  method: string;
  url: string;
  auth: string | undefined;
}

export interface Stored {
  id: number;
  branch: string;
  base: string;
  title: string;
  body: string;
  open: boolean;
}

/** The three providers' pull/merge request endpoints, over one in-memory list per provider. */
export function providerStandIn(token: string, calls: ProviderCall[] = []) {
  const stored: Record<string, Stored[]> = { github: [], gitlab: [], gitea: [] };
  const shape = (provider: string, mr: Stored) =>
    provider === 'gitlab'
      ? { iid: mr.id, web_url: `http://mr.test/${provider}/${mr.id}`, state: mr.open ? 'opened' : 'closed', source_branch: mr.branch, target_branch: mr.base, title: mr.title }
      : { number: mr.id, html_url: `http://mr.test/${provider}/${mr.id}`, state: mr.open ? 'open' : 'closed', head: { ref: mr.branch }, base: { ref: mr.base }, title: mr.title };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const provider = url.pathname.startsWith('/api/v4/') ? 'gitlab' : url.pathname.startsWith('/api/v1/') ? 'gitea' : 'github';
      calls.push({ provider, method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization });
      const expected = { github: `Bearer ${token}`, gitlab: `Bearer ${token}`, gitea: `token ${token}` }[provider];
      if (req.headers.authorization !== expected) return void res.writeHead(401).end('{}');
      const list = stored[provider];
      const body = text ? (JSON.parse(text) as Record<string, string>) : {};
      const send = (status: number, value: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
      const one = /\/(?:pulls|merge_requests)\/(\d+)$/.exec(url.pathname);
      if (req.method === 'GET') {
        const branch = url.searchParams.get('source_branch') ?? url.searchParams.get('head')?.split(':')[1];
        return send(200, list.filter((mr) => mr.open && (branch === undefined || mr.branch === branch)).map((mr) => shape(provider, mr)));
      }
      if (req.method === 'POST') {
        const mr = { id: list.length + 1, branch: body.head ?? body.source_branch, base: body.base ?? body.target_branch, title: body.title, body: body.body ?? body.description, open: true };
        list.push(mr);
        return send(201, shape(provider, mr));
      }
      const mr = one ? list.find((m) => m.id === Number(one[1])) : undefined;
      if (!mr) return send(404, {});
      mr.title = body.title;
      mr.body = body.body ?? body.description;
      return send(200, shape(provider, mr));
    });
  });
  return { server, stored };
}

export async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
