/**
 * A loopback stand-in for the three model APIs the relay knows: it records every request (path,
 * query, headers, body) and answers with fixed usage, plain or streamed as the request asks.
 * Every call reports 100 fresh input tokens, 10 read from and (Anthropic) 5 written to the cache,
 * 20 output tokens, model `stand-model`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export const MODEL = 'stand-model';
/** USD per million tokens, for the runner's --prices file. */
export const PRICES = { [MODEL]: { input_mtok: 1000, output_mtok: 2000, cache_read_mtok: 100, cache_write_mtok: 1250 } };
/** One call's cost at PRICES: Anthropic counts 5 cache-write tokens more. */
export const COST = { anthropic: 0.14725, openai: 0.141, gemini: 0.141 };

const sse = (res: http.ServerResponse, events: unknown[], named = false) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) {
    const type = (e as { type?: string }).type;
    res.write(`${named && type ? `event: ${type}\n` : ''}data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  }
  res.end();
};
const json = (res: http.ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function answer(req: Recorded, res: http.ServerResponse): void {
  const stream = req.body.stream === true;
  if (req.path === '/v1/messages') {
    const usage = { input_tokens: 100, cache_read_input_tokens: 10, cache_creation_input_tokens: 5, output_tokens: 1 };
    if (!stream) return json(res, { type: 'message', model: MODEL, content: [{ type: 'text', text: 'hi' }], usage: { ...usage, output_tokens: 20 } });
    return sse(res, [
      { type: 'message_start', message: { type: 'message', model: MODEL, usage } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 20 } },
      { type: 'message_stop' },
    ], true);
  }
  if (req.path === '/v1/chat/completions') {
    const usage = { prompt_tokens: 110, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 10 } };
    if (!stream) return json(res, { model: MODEL, choices: [{ message: { content: 'hi' } }], usage });
    const withUsage = (req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    return sse(res, [{ model: MODEL, choices: [{ delta: { content: 'hi' } }] }, ...(withUsage ? [{ model: MODEL, choices: [], usage }] : []), '[DONE]']);
  }
  if (req.path === '/v1/responses') {
    const usage = { input_tokens: 110, output_tokens: 20, input_tokens_details: { cached_tokens: 10 } };
    if (!stream) return json(res, { object: 'response', model: MODEL, usage });
    return sse(res, [{ type: 'response.created', response: { model: MODEL } }, { type: 'response.completed', response: { model: MODEL, usage } }], true);
  }
  const gemini = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)$/.exec(req.path);
  if (gemini) {
    const usageMetadata = { promptTokenCount: 110, candidatesTokenCount: 20, cachedContentTokenCount: 10 };
    if (gemini[2] === 'generateContent') return json(res, { candidates: [], usageMetadata, modelVersion: MODEL });
    return sse(res, [{ candidates: [], usageMetadata: { promptTokenCount: 110, candidatesTokenCount: 3 }, modelVersion: MODEL }, { candidates: [], usageMetadata, modelVersion: MODEL }]);
  }
  res.writeHead(404).end();
}

export async function startStandIn(): Promise<{ url: string; port: number; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        // not JSON: recorded empty
      }
      const recorded = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      requests.push(recorded);
      answer(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
