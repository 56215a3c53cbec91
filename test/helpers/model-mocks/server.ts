/**
 * A stand-in for the model APIs of the four agent CLIs, served by the tests on loopback: one HTTP
 * server that speaks Anthropic Messages (Claude Code), OpenAI Responses (Codex), Gemini
 * generateContent (Gemini CLI) and OpenAI chat completions (OpenCode), each under its own paths.
 * It answers from scripts (script.ts) and records every request, so a test can check what a CLI
 * sent (its key, the earlier conversation of a resumed session) and what usage it was told.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { anthropic } from './anthropic.ts';
import { gemini } from './gemini.ts';
import { openaiChat } from './openai-chat.ts';
import { openaiResponses } from './openai-responses.ts';
import { DEFAULT_SCRIPTS, chooseTurn, scriptName, type Conversation, type MockUsage, type Script, type Turn } from './script.ts';
import type { MockReply, WireFormat } from './wire.ts';

const FORMATS: readonly WireFormat[] = [anthropic, openaiResponses, gemini, openaiChat];

export interface MockRequest {
  format: string;
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  conversation: Conversation;
  /** The script that answered, or null for a side request (no tools offered). */
  script: string | null;
  /** The script the conversation names (`mock-script:<name>`), side requests included; `default` when none. */
  marker: string;
  turnIndex: number | null;
  usage: MockUsage | null;
  /** The credential the request carried (x-api-key, x-goog-api-key, Bearer or ?key=), or null. */
  apiKey: string | null;
  /** Answered with an error: 401 (it lacked `requiredKey`), or a script's `fail` step. */
  refused: boolean;
}

export interface ModelMock {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: MockRequest[];
  /**
   * The key every request must carry (x-api-key, x-goog-api-key, Bearer or ?key=): without it a
   * request is answered 401, as the real APIs do. Null (default): any key or none.
   */
  requiredKey: string | null;
  /** Adds (or replaces) a script, chosen by `mock-script:<name>` in a prompt. */
  script(name: string, turns: Script): void;
  /** The requests a script answered (side requests excluded). */
  requestsOf(script: string): MockRequest[];
  /** Every request of conversations naming the script, side requests included. */
  conversationOf(script: string): MockRequest[];
  close(): Promise<void>;
}

function apiKeyOf(req: http.IncomingMessage, url: URL): string | null {
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value : null;
  };
  const bearer = header('authorization')?.replace(/^Bearer\s+/i, '') ?? null;
  return header('x-api-key') ?? header('x-goog-api-key') ?? bearer ?? url.searchParams.get('key');
}

function write(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startModelMock(): Promise<ModelMock> {
  const scripts: Record<string, Script> = { ...DEFAULT_SCRIPTS };
  const requests: MockRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://mock');
      const format = FORMATS.find((f) => f.matches(req.method ?? 'GET', url.pathname));
      if (!format) {
        write(res, 404, { error: { message: `the model mock does not serve ${req.method} ${url.pathname}` } });
        return;
      }
      let body: Record<string, unknown>;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        write(res, 400, { error: { message: 'body is not JSON' } });
        return;
      }
      const conversation = format.conversation(url.pathname, body);
      const apiKey = apiKeyOf(req, url);
      if (mock.requiredKey !== null && apiKey !== mock.requiredKey) {
        requests.push({ format: format.name, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, conversation, script: null, marker: scriptName(conversation).name, turnIndex: null, usage: null, apiKey, refused: true });
        write(res, 401, { error: { type: 'authentication_error', code: 401, message: 'invalid API key (model stand-in)' } });
        return;
      }
      const chosen = chooseTurn(conversation, scripts);
      const id = `${Date.now().toString(36)}${(++counter).toString(36)}`;
      if (chosen && 'fail' in chosen.turn) {
        const { status, message } = chosen.turn.fail;
        requests.push({ format: format.name, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, conversation, script: chosen.script, marker: scriptName(conversation).name, turnIndex: chosen.index, usage: null, apiKey, refused: true });
        write(res, status, { type: 'error', error: { type: 'invalid_request_error', code: status, status: 'INVALID_ARGUMENT', message } });
        return;
      }
      const turn = chosen?.turn as Turn | undefined;
      let reply: MockReply;
      try {
        reply = format.respond({ pathname: url.pathname, search: url.search, body, turn: turn ?? null, turnIndex: chosen?.index ?? null, id });
      } catch (error) {
        // Kept, so a test can say what the CLI offered when the script asked for something else.
        requests.push({ format: format.name, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, conversation, script: null, marker: scriptName(conversation).name, turnIndex: null, usage: null, apiKey, refused: true });
        write(res, 500, { error: { message: (error as Error).message } });
        return;
      }
      requests.push({
        format: format.name,
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body,
        conversation,
        script: chosen?.script ?? null,
        marker: scriptName(conversation).name,
        turnIndex: chosen?.index ?? null,
        usage: reply.usage,
        apiKey,
        refused: false,
      });
      if (reply.sse) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        for (const event of reply.sse) {
          const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
          res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
        }
        res.end();
      } else write(res, 200, reply.json ?? {});
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const mock: ModelMock = {
    url: `http://127.0.0.1:${port}`,
    requests,
    requiredKey: null,
    script(name, turns) {
      if (turns.length === 0) throw new Error('a script needs at least one turn');
      scripts[name] = turns;
    },
    requestsOf: (script) => requests.filter((r) => r.script === script),
    conversationOf: (script) => requests.filter((r) => r.marker === script),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return mock;
}
