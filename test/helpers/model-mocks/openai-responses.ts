/**
 * The OpenAI Responses API as Codex calls it through a `[model_providers.<id>]` block with
 * `wire_api = "responses"`: `POST /v1/responses`, streamed as SSE.
 * https://platform.openai.com/docs/api-reference/responses-streaming
 */
import { pickMcpTool, pickTool, textOf, usageFor, type Conversation, type MockUsage, type Turn } from './script.ts';
import type { WireFormat } from './wire.ts';

interface Item {
  type?: string;
  role?: string;
  content?: unknown;
}

/** Joins a namespace and one of its tools in the names `toolNames` lists. */
const NAMESPACED = '::';

function toolNames(body: Record<string, unknown>): string[] {
  const tools = (body.tools as { type?: string; name?: string; tools?: { name?: string }[] }[] | undefined) ?? [];
  return tools.flatMap((t) => [t.name ?? t.type ?? '', ...(t.type === 'namespace' ? (t.tools ?? []).map((inner) => `${t.name}${NAMESPACED}${inner.name}`) : [])]).filter(Boolean);
}

function conversation(body: Record<string, unknown>): Conversation {
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : ((body.input as Item[]) ?? []);
  const messages: Conversation['messages'] = [];
  for (const item of input) {
    if (item.type === 'message' || (item.type === undefined && item.role)) {
      messages.push({ role: item.role === 'assistant' ? 'assistant' : item.role === 'user' ? 'user' : 'system', text: textOf(item.content), toolResults: 0, toolOutput: '' });
    } else if (typeof item.type === 'string' && item.type.endsWith('_call_output')) {
      messages.push({ role: 'user', text: '', toolResults: 1, toolOutput: textOf((item as { output?: unknown }).output) });
    }
  }
  return { tools: toolNames(body), messages };
}

function outputItem(turn: Turn | null, tools: string[], id: string): Record<string, unknown> {
  const message = (text: string) => ({ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
  if (turn === null) return message('Mock title');
  if ('text' in turn) return message(turn.text);
  if ('mcp' in turn) {
    const name = pickMcpTool(tools, turn.mcp.server, turn.mcp.name);
    // A tool of a `namespace` (how Codex offers an MCP server's tools) is called by its own name within it.
    const [namespace, inner] = name.includes(NAMESPACED) ? name.split(NAMESPACED) : [null, name];
    return { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, ...(namespace ? { namespace } : {}), name: inner, arguments: JSON.stringify(turn.mcp.input), status: 'completed' };
  }
  if ('write' in turn && tools.includes('apply_patch')) {
    // Offered (to the models Codex knows) as a freeform tool: the call's input is the patch itself.
    const added = turn.write.content.replace(/\n$/, '').split('\n').map((line) => `+${line}\n`).join('');
    const patch = `*** Begin Patch\n*** Add File: ${turn.write.path}\n${added}*** End Patch\n`;
    return { type: 'custom_tool_call', id: `ctc_${id}`, call_id: `call_${id}`, name: 'apply_patch', input: patch, status: 'completed' };
  }
  const command = 'shell' in turn ? turn.shell : `cat > '${turn.write.path}' <<'MOCK_EOF'\n${turn.write.content}\nMOCK_EOF`;
  const name = pickTool(tools, ['exec_command', 'shell', 'shell_command']);
  const args = name === 'exec_command' ? { cmd: command } : name === 'shell' ? { command: ['bash', '-lc', command] } : { command };
  return { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name, arguments: JSON.stringify(args), status: 'completed' };
}

function usage(u: MockUsage) {
  return {
    input_tokens: u.input + u.cacheRead,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.cacheRead + u.output,
  };
}

export const openaiResponses: WireFormat = {
  name: 'openai-responses',
  matches: (method, pathname) => method === 'POST' && pathname === '/v1/responses',
  conversation: (_pathname, body) => conversation(body),
  respond({ body, turn, turnIndex, id }) {
    const u = usageFor(turnIndex ?? 0);
    const item = outputItem(turn, toolNames(body), id);
    const response = { id: `resp_${id}`, object: 'response', model: String(body.model ?? 'mock-model'), status: 'in_progress', output: [] as unknown[] };
    const events: { event: string; data: unknown }[] = [
      { event: 'response.created', data: { type: 'response.created', response } },
      { event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } } },
    ];
    if (item.type === 'message') {
      const text = (item.content as { text: string }[])[0].text;
      events.push({ event: 'response.output_text.delta', data: { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text } });
    }
    events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } });
    events.push({ event: 'response.completed', data: { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage: usage(u) } } });
    return { sse: events, usage: u };
  },
};
