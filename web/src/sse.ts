/** A Server-Sent Events reader for fetch bodies (EventSource cannot send the X-API-Key header). */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** Reads an SSE body, calling `onMessage` per event; resolves when the body ends. */
export async function readSse(body: ReadableStream<Uint8Array>, onMessage: (message: SseMessage) => void, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined));
  while (true) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    // A CR at the end of the buffer may be the first half of a CRLF: wait for the next chunk.
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0 && !(newline === buffer.length - 1 && buffer[newline] === '\r')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length) onMessage({ id, event: event || 'message', data: data.join('\n') });
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = text;
      else if (field === 'event') event = text;
      else if (field === 'data') data.push(text);
    }
  }
}

