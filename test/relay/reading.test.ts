/**
 * What the relay reads on each call without holding it up (docs/agents.md "The relay's cost per
 * call"): the request's model found by scanning the body (late, escaped, nested look-alikes), a
 * streamed Chat Completions call asked for its usage, the usage of streamed answers of every shape
 * read from raw chunks however they are split, and the answer passed on in one write per read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceTable } from '../../src/runner/relay/pricing.ts';
import { prepareBody } from '../../src/runner/relay/request.ts';
import { ModelRelay, type RelayCall } from '../../src/runner/relay/server.ts';
import { UsageReader } from '../../src/runner/relay/usage.ts';
import { UpstreamAddresses } from '../../src/runner/relay/upstreams.ts';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const model = (body: Buffer | string, pathname = '/v1/messages', provider: 'anthropic' | 'openai' | 'gemini' = 'anthropic') =>
  prepareBody(provider, pathname, Buffer.from(body), 'application/json').model;

describe('the request: its model, found without parsing the body', () => {
  const conversation = {
    system: [{ type: 'text', text: 'You are "model": {not} a [model]. \\" \\\\' }],
    messages: Array.from({ length: 50 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `{"model":"fake-${i}"} ]]} \\"\u00e9\u{1F600}` }, { type: 'tool_result', content: { model: 'nested', list: [1, 2.5e3, true, null, [], {}] } }] })),
    metadata: { model: 'not-this' },
  };

  it('first, late, after nested look-alikes, with escapes in the key and the value, amid whitespace', () => {
    expect(model(json({ model: 'claude-first', ...conversation }))).toBe('claude-first');
    expect(model(json({ ...conversation, max_tokens: 10, model: 'claude-late' }))).toBe('claude-late');
    expect(model('{"mod\\u0065l": "claude-\\u0073onnet-\\"4\\""}')).toBe('claude-sonnet-"4"');
    expect(model(' \n{ "max_tokens" : 10 ,\t"stream":true , "model"\r\n:\n"spaced" } ')).toBe('spaced');
    // Every placement of the key among the others gives what JSON.parse gives.
    const keys = Object.entries({ ...conversation, max_tokens: 100, stream: true, temperature: -0.5, tools: [] });
    for (let at = 0; at <= keys.length; at++) {
      const body = json(Object.fromEntries([...keys.slice(0, at), ['model', `m-${at}`], ...keys.slice(at)]));
      expect(model(body)).toBe((JSON.parse(body.toString()) as { model: string }).model);
    }
  });

  it('no string model at the top: the one in the path (Gemini), else none', () => {
    expect(model(json(conversation))).toBeNull();
    expect(model(json({ model: 42, ...conversation }))).toBeNull();
    expect(model(json({ contents: [] }), '/v1beta/models/gemini-2.5-pro:streamGenerateContent', 'gemini')).toBe('gemini-2.5-pro');
    expect(model('[{"model":"in-array"}]')).toBeNull();
    expect(model('{"messages": [ {"model": "cut short"')).toBeNull();
    expect(model('not json at all')).toBeNull();
    expect(model('{}')).toBeNull();
    expect(prepareBody('anthropic', '/v1/messages', json({ model: 'x' }), 'text/plain').model).toBeNull();
  });

  it('the body is forwarded as it came (same bytes) unless a streamed Chat Completions call must ask for usage', () => {
    const body = json({ model: 'claude', stream: true, ...conversation });
    expect(prepareBody('anthropic', '/v1/messages', body, 'application/json').forwarded).toBe(body);
    const responses = json({ model: 'gpt-5', stream: true, input: 'hi' });
    expect(prepareBody('openai', '/v1/responses', responses, 'application/json').forwarded).toBe(responses);
    for (const unchanged of [{ model: 'gpt', stream: false, messages: [] }, { model: 'gpt', messages: [{ stream: true }] }, { model: 'gpt', stream: true, stream_options: { include_usage: true } }]) {
      const b = json(unchanged);
      expect(prepareBody('openai', '/v1/chat/completions', b, 'application/json').forwarded).toBe(b);
    }
  });

  it('a streamed Chat Completions call gets stream_options.include_usage, its other options kept', () => {
    const chat = (value: unknown) => {
      const out = prepareBody('openai', '/v1/chat/completions', Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), 'application/json');
      return { model: out.model, body: JSON.parse(out.forwarded.toString()) as Record<string, unknown> };
    };
    expect(chat({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] })).toEqual({
      model: 'gpt-4o',
      body: { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } },
    });
    expect(chat('  {"messages":[],"stream" : true,"model":"late"}').body).toEqual({ messages: [], stream: true, model: 'late', stream_options: { include_usage: true } });
    expect(chat({ model: 'gpt', stream: true, stream_options: { include_usage: false, continuous_usage_stats: true } }).body.stream_options).toEqual({ include_usage: true, continuous_usage_stats: true });
    // A repeated key: the last one counts, as for JSON.parse (and the provider).
    expect(chat('{"stream":false,"model":"a","stream":true}').body.stream_options).toEqual({ include_usage: true });
  });
});

// ---------------------------------------------------------------------------------------------

const sse = (events: unknown[], named = false, eol = '\n') =>
  events.map((e) => `${named ? `event: ${(e as { type: string }).type}${eol}` : ''}data: ${JSON.stringify(e)}${eol}${eol}`).join('');

const BIG = 'x'.repeat(70_000);
const STREAMS: { name: string; provider: 'anthropic' | 'openai' | 'gemini'; text: string; expected: Record<string, unknown> }[] = [
  {
    name: 'Anthropic Messages',
    provider: 'anthropic',
    text: sse([
      { type: 'message_start', message: { model: 'claude-é😀', usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'usage: "usage" 😀 é' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 20 } },
      { type: 'message_stop' },
    ], true),
    expected: { model: 'claude-é😀', input_tokens: 100, output_tokens: 20, cache_read_tokens: 10, cache_write_tokens: 5 },
  },
  {
    name: 'OpenAI Responses, usage at the end of a large event',
    provider: 'openai',
    text: sse([{ type: 'response.created', response: { model: 'gpt-5' } }, { type: 'response.completed', response: { model: 'gpt-5', output: [{ text: BIG }], usage: { input_tokens: 110, output_tokens: 20, input_tokens_details: { cached_tokens: 10 } } } }], true),
    expected: { model: 'gpt-5', input_tokens: 100, output_tokens: 20, cache_read_tokens: 10, cache_write_tokens: 0 },
  },
  {
    name: 'OpenAI Chat Completions, CRLF line ends, no blank line at the end',
    provider: 'openai',
    text: `${sse([{ model: 'gpt-4o', choices: [{ delta: { content: 'hi' } }] }, { model: 'gpt-4o', choices: [], usage: { prompt_tokens: 110, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 10 } } }], false, '\r\n')}data: [DONE]`,
    expected: { model: 'gpt-4o', input_tokens: 100, output_tokens: 20, cache_read_tokens: 10, cache_write_tokens: 0 },
  },
  {
    name: 'Gemini (alt=sse), a byte order mark first',
    provider: 'gemini',
    text: `\uFEFF${sse([{ candidates: [], usageMetadata: { promptTokenCount: 110, candidatesTokenCount: 3 }, modelVersion: 'gemini-x' }, { candidates: [], usageMetadata: { promptTokenCount: 110, candidatesTokenCount: 20, thoughtsTokenCount: 2, cachedContentTokenCount: 10 }, modelVersion: 'gemini-x' }])}`,
    expected: { model: 'gemini-x', input_tokens: 100, output_tokens: 22, cache_read_tokens: 10, cache_write_tokens: 0 },
  },
];

const readAll = (provider: 'anthropic' | 'openai' | 'gemini', chunks: Buffer[]) => {
  const reader = new UsageReader(provider, true, 'from-request');
  for (const chunk of chunks) reader.write(chunk);
  return reader.end();
};

describe('streamed usage, read from raw chunks', () => {
  for (const { name, provider, text, expected } of STREAMS) {
    it(`${name}: the same usage however the stream is cut`, () => {
      const bytes = Buffer.from(text);
      expect(readAll(provider, [bytes])).toEqual(expected);
      // Cut once at every place (at each byte of a large stream's ends and around its usage).
      const usage = bytes.indexOf('"usage');
      const cuts = bytes.length < 2000 ? Array.from({ length: bytes.length + 1 }, (_, i) => i) : [...Array.from({ length: 400 }, (_, i) => i), ...Array.from({ length: 400 }, (_, i) => bytes.length - i), ...Array.from({ length: 40 }, (_, i) => usage - 20 + i)];
      for (const cut of cuts) expect(readAll(provider, [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected);
      // One byte at a time, and in pieces of 7 (multi-byte characters cut).
      if (bytes.length < 2000) expect(readAll(provider, Array.from(bytes, (b) => Buffer.from([b])))).toEqual(expected);
      expect(readAll(provider, Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7)))).toEqual(expected);
    });
  }

  it('a stream that reports no usage: none (the model of the request is not a usage)', () => {
    expect(readAll('anthropic', [Buffer.from(sse([{ type: 'content_block_delta', delta: { text: 'no usage here' } }]))])).toBeNull();
  });
});

describe('the upstream addresses the relay keeps', () => {
  it('kept once resolved, per host and allowance; forgotten on demand', async () => {
    const upstreams = new UpstreamAddresses();
    const target = new URL('http://127.0.0.1:9/v1/messages');
    expect(upstreams.kept(target, true)).toBeUndefined();
    expect((await upstreams.resolve(target, true)).address).toBe('127.0.0.1');
    expect(upstreams.kept(new URL('http://127.0.0.1:9/other'), true)?.address).toBe('127.0.0.1');
    expect(upstreams.kept(target, false)).toBeUndefined();
    expect(upstreams.kept(new URL('http://127.0.0.1:10/'), true)).toBeUndefined();
    expect(upstreams.kept(target, true, Date.now() + 31_000)).toBeUndefined();
    await expect(upstreams.resolve(target, false)).rejects.toThrow(/loopback/);
    expect(upstreams.kept(target, false)).toBeUndefined();
    upstreams.forget(target);
    expect(upstreams.kept(target, true)).toBeUndefined();
  });
});

describe('the answer passed on', () => {
  const KEY = 'sk-ant-reading-test-real';
  let upstream: http.Server;
  let relay: ModelRelay;
  let base: string;
  let placeholder: string;
  const calls: RelayCall[] = [];

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // Written at once: one packet, as a provider's burst of events arrives.
        res.cork();
        for (const event of STREAMS[0].text.split(/(?<=\n\n)/)) res.write(event);
        res.end();
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    relay = new ModelRelay(new PriceTable(), { call: (call) => calls.push(call), budgetReached: () => {}, upstreamAllowed: () => true });
    await relay.listen();
    const { pod } = relay.pods.attach({ key: 'p-reading', credentials: { ANTHROPIC_API_KEY: KEY }, env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }, budgets: [] });
    placeholder = [...pod.placeholders.keys()][0];
    base = `http://127.0.0.1:${relay.port}/anthropic`;
  });
  afterAll(async () => {
    await relay.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('a stream that came at once goes on in one piece, its head with it; its usage is recorded', async () => {
    const got = await new Promise<{ pieces: number; text: string }>((resolve, reject) => {
      const req = http.request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': placeholder, 'content-type': 'application/json' } }, (res) => {
        const pieces: Buffer[] = [];
        res.on('data', (chunk: Buffer) => pieces.push(chunk));
        res.on('end', () => resolve({ pieces: pieces.length, text: Buffer.concat(pieces).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'claude-sonnet-4-5', stream: true }));
    });
    expect(got.text).toBe(STREAMS[0].text);
    // One chunk of the relay's answer for the four events (was one per event).
    expect(got.pieces).toBe(1);
    expect(calls.map((c) => [c.pod_key, c.model, c.input_tokens, c.output_tokens])).toEqual([['p-reading', 'claude-é😀', 100, 20]]);
  });
});
