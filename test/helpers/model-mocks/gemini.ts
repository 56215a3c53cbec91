/**
 * The Gemini API as Gemini CLI calls it with `GOOGLE_GEMINI_BASE_URL` and an API key:
 * `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, `:generateContent` (its model
 * router and other JSON side questions, answered from the request's response schema) and
 * `:countTokens`. https://ai.google.dev/api/generate-content
 */
import { pickMcpTool, pickTool, usageFor, type Conversation, type MockUsage, type Turn } from './script.ts';
import type { WireFormat } from './wire.ts';

const PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

interface Part {
  text?: string;
  functionCall?: unknown;
  functionResponse?: unknown;
  thought?: boolean;
}

function toolNames(body: Record<string, unknown>): string[] {
  const tools = (body.tools as { functionDeclarations?: { name: string }[] }[] | undefined) ?? [];
  return tools.flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name));
}

function conversation(body: Record<string, unknown>): Conversation {
  const contents = (body.contents as { role?: string; parts?: Part[] }[] | undefined) ?? [];
  return {
    tools: toolNames(body),
    messages: contents.map((c) => ({
      role: c.role === 'model' ? ('assistant' as const) : ('user' as const),
      text: (c.parts ?? [])
        .filter((p) => typeof p.text === 'string' && !p.thought)
        .map((p) => p.text)
        .join('\n'),
      toolResults: (c.parts ?? []).filter((p) => p.functionResponse !== undefined).length,
      toolOutput: (c.parts ?? [])
        .filter((p) => p.functionResponse !== undefined)
        .map((p) => JSON.stringify(p.functionResponse))
        .join('\n'),
    })),
  };
}

/** A value that satisfies a (JSON or OpenAPI-style) schema: enums take their first value. */
function sample(schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return 'ok';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(schema.type ?? 'string').toLowerCase();
  switch (type) {
    case 'object': {
      const properties = (schema.properties as Record<string, Record<string, unknown>> | undefined) ?? {};
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sample(value)]));
    }
    case 'array':
      return [];
    case 'boolean':
      return false;
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    default:
      return 'ok';
  }
}

function parts(turn: Turn | null, tools: string[], body: Record<string, unknown>): Part[] {
  if (turn === null) {
    const config = (body.generationConfig as Record<string, unknown> | undefined) ?? {};
    const schema = (config.responseJsonSchema ?? config.responseSchema) as Record<string, unknown> | undefined;
    return [{ text: config.responseMimeType === 'application/json' || schema ? JSON.stringify(sample(schema)) : 'Mock title' }];
  }
  if ('text' in turn) return [{ text: turn.text }];
  if ('shell' in turn) return [{ functionCall: { name: pickTool(tools, ['run_shell_command']), args: { command: turn.shell } } }];
  if ('mcp' in turn) return [{ functionCall: { name: pickMcpTool(tools, turn.mcp.server, turn.mcp.name), args: turn.mcp.input } }];
  return [{ functionCall: { name: pickTool(tools, ['write_file']), args: { file_path: turn.write.path, content: turn.write.content } } }];
}

function usageMetadata(u: MockUsage) {
  return {
    promptTokenCount: u.input + u.cacheRead,
    cachedContentTokenCount: u.cacheRead,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.cacheRead + u.output,
  };
}

export const gemini: WireFormat = {
  name: 'gemini',
  matches: (method, pathname) => method === 'POST' && PATH.test(pathname),
  conversation: (_pathname, body) => conversation(body),
  respond({ pathname, body, turn, turnIndex }) {
    const [, model, action] = PATH.exec(pathname)!;
    if (action === 'countTokens') return { json: { totalTokens: 1234 }, usage: null };
    const u = usageFor(turnIndex ?? 0);
    const response = {
      candidates: [{ content: { role: 'model', parts: parts(turn, toolNames(body), body) }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(u),
      modelVersion: model,
    };
    if (action === 'generateContent') return { json: response, usage: u };
    return { sse: [{ data: response }], usage: u };
  },
};
