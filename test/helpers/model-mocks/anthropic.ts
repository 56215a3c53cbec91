/**
 * The Anthropic Messages API as Claude Code calls it: `POST /v1/messages` (streamed as SSE when
 * `stream: true`, else one JSON message) and `POST /v1/messages/count_tokens`.
 * https://docs.anthropic.com/en/api/messages-streaming
 */
import { pickMcpTool, pickTool, textOf, usageFor, type Conversation, type MockUsage, type Turn } from './script.ts';
import type { WireFormat } from './wire.ts';

interface Block {
  type: string;
  text?: string;
  content?: unknown;
}

function conversation(body: Record<string, unknown>): Conversation {
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]).map((t) => String(t.name ?? '')) : [];
  const messages = ((body.messages as { role: string; content: unknown }[] | undefined) ?? []).map((m) => {
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : ((m.content as Block[]) ?? []);
    return {
      role: m.role === 'assistant' ? ('assistant' as const) : m.role === 'system' ? ('system' as const) : ('user' as const),
      text: blocks
        .filter((b) => b.type === 'text')
        .map((b) => b.text ?? '')
        .join('\n'),
      toolResults: blocks.filter((b) => b.type === 'tool_result').length,
      toolOutput: blocks
        .filter((b) => b.type === 'tool_result')
        .map((b) => textOf(b.content))
        .join('\n'),
    };
  });
  return { tools, messages };
}

function contentBlocks(turn: Turn | null, tools: string[], id: string): Record<string, unknown>[] {
  if (turn === null) return [{ type: 'text', text: 'Mock title' }];
  if ('text' in turn) return [{ type: 'text', text: turn.text }];
  if ('shell' in turn) {
    return [{ type: 'tool_use', id: `toolu_${id}`, name: pickTool(tools, ['Bash']), input: { command: turn.shell, description: 'Run a command' } }];
  }
  if ('mcp' in turn) return [{ type: 'tool_use', id: `toolu_${id}`, name: pickMcpTool(tools, turn.mcp.server, turn.mcp.name), input: turn.mcp.input }];
  return [{ type: 'tool_use', id: `toolu_${id}`, name: pickTool(tools, ['Write']), input: { file_path: turn.write.path, content: turn.write.content } }];
}

function usage(u: MockUsage) {
  return { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite };
}

export const anthropic: WireFormat = {
  name: 'anthropic',
  matches: (method, pathname) => method === 'POST' && (pathname === '/v1/messages' || pathname === '/v1/messages/count_tokens'),
  conversation: (_pathname, body) => conversation(body),
  respond({ pathname, body, turn, turnIndex, id }) {
    if (pathname.endsWith('/count_tokens')) return { json: { input_tokens: 1234 }, usage: null };
    const model = String(body.model ?? 'mock-model');
    const u = usageFor(turnIndex ?? 0);
    const blocks = contentBlocks(turn, conversation(body).tools, id);
    const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model, stop_sequence: null };
    if (body.stream !== true) {
      return { json: { ...message, content: blocks, stop_reason: stopReason, usage: usage(u) }, usage: u };
    }
    const events: { event: string; data: unknown }[] = [
      { event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage(u), output_tokens: 1 } } } },
    ];
    blocks.forEach((block, index) => {
      if (block.type === 'text') {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } } });
      } else {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } });
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
        });
      }
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    });
    events.push({
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: u.output } },
    });
    events.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return { sse: events, usage: u };
  },
};
