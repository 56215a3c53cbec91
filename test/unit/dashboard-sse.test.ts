/**
 * The dashboard's SSE reader (web/src/live.ts): events split across chunks at any byte, CRLF and
 * LF line ends, comments (`: keepalive`), several `data:` lines, and `id:` kept across events.
 */
import { describe, expect, it } from 'vitest';
import { readSse, type SseMessage } from '../../web/src/sse.ts';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  await readSse(streamOf(chunks), (m) => messages.push(m), new AbortController().signal);
  return messages;
}

const TEXT = ': keepalive\n\nid: 7\nevent: ticket.created\ndata: {"id":7,"type":"ticket.created","data":{"slug":"DEF-1","title":"é"}}\n\r\nevent: output\r\ndata: line one\r\ndata: line two\r\n\r\n';

describe('dashboard SSE reader', () => {
  it('reads events, whatever the chunking', async () => {
    const whole = await read([TEXT]);
    expect(whole).toEqual([
      { id: '7', event: 'ticket.created', data: '{"id":7,"type":"ticket.created","data":{"slug":"DEF-1","title":"é"}}' },
      { id: '7', event: 'output', data: 'line one\nline two' },
    ]);
    const bytes = new TextEncoder().encode(TEXT);
    for (const size of [1, 2, 3, 5, 17]) {
      const chunks: string[] = [];
      // Split on byte boundaries too: a multi-byte character may arrive in two chunks.
      const decoder = new TextDecoder();
      for (let i = 0; i < bytes.length; i += size) chunks.push(decoder.decode(bytes.subarray(i, i + size), { stream: true }));
      expect(await read(chunks), `chunks of ${size}`).toEqual(whole);
    }
  });

  it('ignores an event without data and a trailing partial event', async () => {
    expect(await read(['event: nothing\n\n', 'data: cut off'])).toEqual([]);
  });
});
