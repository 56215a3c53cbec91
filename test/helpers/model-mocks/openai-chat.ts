/**
 * OpenAI chat completions as OpenCode calls them through an `@ai-sdk/openai-compatible` provider:
 * `POST /v1/chat/completions`, streamed as SSE chunks ending with `data: [DONE]` (or one JSON
 * completion without `stream`). https://platform.openai.com/docs/api-reference/chat-streaming
 */
import { pickMcpTool, pickTool, textOf, usageFor, type Conversation, type MockUsage, type Turn } from './script.ts';
import type { WireFormat } from './wire.ts';

function toolNames(body: Record<string, unknown>): string[] {
  const tools = (body.tools as { function?: { name?: string } }[] | undefined) ?? [];
  return tools.map((t) => t.function?.name ?? '').filter(Boolean);
}

function conversation(body: Record<string, unknown>): Conversation {
  const messages = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  return {
    tools: toolNames(body),
    messages: messages.map((m) => ({
      role: m.role === 'assistant' ? ('assistant' as const) : m.role === 'system' ? ('system' as const) : ('user' as const),
      text: m.role === 'tool' ? '' : textOf(m.content),
      toolResults: m.role === 'tool' ? 1 : 0,
      toolOutput: m.role === 'tool' ? textOf(m.content) : '',
    })),
  };
}

function toolCall(turn: Turn, tools: string[], id: string) {
  if ('shell' in turn) {
    return { name: pickTool(tools, ['bash']), arguments: JSON.stringify({ command: turn.shell, description: 'Run a command' }) };
  }
  if ('write' in turn) return { name: pickTool(tools, ['write']), arguments: JSON.stringify({ filePath: turn.write.path, content: turn.write.content }) };
  if ('mcp' in turn) return { name: pickMcpTool(tools, turn.mcp.server, turn.mcp.name), arguments: JSON.stringify(turn.mcp.input) };
  throw new Error(`not a tool call: ${id}`);
}

function usage(u: MockUsage) {
  return {
    prompt_tokens: u.input + u.cacheRead,
    completion_tokens: u.output,
    total_tokens: u.input + u.cacheRead + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
  };
}

export const openaiChat: WireFormat = {
  name: 'openai-chat',
  matches: (method, pathname) => method === 'POST' && pathname === '/v1/chat/completions',
  conversation: (_pathname, body) => conversation(body),
  respond({ body, turn, turnIndex, id }) {
    const u = usageFor(turnIndex ?? 0);
    const model = String(body.model ?? 'mock-model');
    const base = { id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
    const text = turn === null ? 'Mock title' : 'text' in turn ? turn.text : null;
    const call = text === null ? toolCall(turn!, toolNames(body), id) : null;
    const finish = call ? 'tool_calls' : 'stop';
    if (body.stream !== true) {
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${id}`, type: 'function', function: call }] }
        : { role: 'assistant', content: text };
      return { json: { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage: usage(u) }, usage: u };
    }
    const delta = call
      ? { role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${id}`, type: 'function', function: call }] }
      : { role: 'assistant', content: text };
    return {
      sse: [
        { data: { ...base, choices: [{ index: 0, delta, finish_reason: null }] } },
        { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] } },
        { data: { ...base, choices: [], usage: usage(u) } },
        { data: '[DONE]' },
      ],
      usage: u,
    };
  },
};
