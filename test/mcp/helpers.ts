/**
 * `drover mcp` as the real child process an agent starts, driven by the SDK's own Client over
 * StdioClientTransport: the same code path as Claude Code or Codex talking to it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { onTestFinished } from 'vitest';
import { DROVER_BIN, REPO_ROOT } from '../helpers/server-process.ts';

export interface McpEnv {
  DROVER_API_URL: string;
  DROVER_ORG: string;
  DROVER_API_KEY?: string;
  DROVER_POD_TOKEN?: string;
  DROVER_CHANNEL_ID?: string;
  DROVER_STATUS_FILE?: string;
}

/** Starts `drover mcp` with `env` (and PATH, HOME only) and connects a client; both end with the test. */
export async function connectMcp(env: McpEnv): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DROVER_BIN, 'mcp'],
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'drover-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}

export interface ToolAnswer<T = unknown> {
  isError: boolean;
  text: string;
  json: T;
}

/** Calls a tool; its text parsed as JSON (an error's JSON is its second line). */
export async function callTool<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<ToolAnswer<T>> {
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  const jsonText = result.isError ? text.slice(text.indexOf('\n') + 1) : text;
  let json: T;
  try {
    json = JSON.parse(jsonText) as T;
  } catch {
    throw new Error(`tool ${name} answered text that is not JSON: ${text}`);
  }
  return { isError: result.isError === true, text, json };
}

/** A tool that must succeed: its JSON. */
export async function ok<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
  const answer = await callTool<T>(client, name, args, timeoutMs);
  if (answer.isError) throw new Error(`tool ${name} failed: ${answer.text}`);
  return answer.json;
}

/** A tool that must fail with the API error `code`: its error body. */
export async function refused(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<{ error: string; code: string; status?: number; request_id?: string }> {
  const answer = await callTool<{ error: string; code: string; status?: number; request_id?: string }>(client, name, args);
  if (!answer.isError) throw new Error(`tool ${name} succeeded, expected ${code}: ${answer.text}`);
  if (answer.json.code !== code) throw new Error(`tool ${name} failed with ${answer.json.code}, expected ${code}: ${answer.text}`);
  return answer.json;
}
