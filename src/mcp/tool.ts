/**
 * One MCP tool of `drover mcp`: its name, what it is for, its input (a zod shape, which the SDK
 * turns into the JSON schema clients see and validates calls against), the scope it needs (the
 * tool is listed only when the credential holds it) and its call. A call answers JSON; an API
 * error becomes a tool error (`isError`) carrying the API's status, code, message and request id.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ApiError, UnreachableError, type DroverClient } from '../client/index.ts';
import type { McpEnvironment } from './env.ts';

export interface ToolContext {
  client: DroverClient;
  env: McpEnvironment;
}

export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Shape;
  /** The scope the credential must hold (a `:write` scope implies the `:read` one); null: no API call. */
  scope: string | null;
  /** Listed only inside a pod (report_status). */
  podOnly?: boolean;
  /** The tool waits (channel_wait, pod_wait): it gets the call's abort signal. */
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext, signal: AbortSignal): Promise<Answer>;
}

/** A tool's answer: the API's JSON text as it came, or a value to write as JSON. */
export type Answer = { raw: string } | { value: unknown };

export const tool = <Shape extends z.ZodRawShape>(definition: ToolDefinition<Shape>): ToolDefinition => definition as unknown as ToolDefinition;

/** A refusal of the tool itself (no channel given and no default): a tool error like the API's. */
export class ToolInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export function success(answer: Answer): CallToolResult {
  const text = 'raw' in answer ? answer.raw : JSON.stringify(answer.value);
  return { content: [{ type: 'text', text }] };
}

/** A failed call as an MCP tool error: the API's error body (status, code, message, request id, details). */
export function failure(error: unknown): CallToolResult {
  let body: Record<string, unknown>;
  if (error instanceof ApiError) {
    body = { error: error.message, code: error.code, status: error.status, request_id: error.requestId };
    if (error.details) body.details = error.details;
    if (error.requiredScopes) body.required_scopes = error.requiredScopes;
  } else if (error instanceof ToolInputError) {
    body = { error: error.message, code: 'VALIDATION_FAILED', details: [{ field: error.field, message: error.message }] };
  } else if (error instanceof UnreachableError) {
    body = { error: error.message, code: 'UNREACHABLE' };
  } else {
    body = { error: error instanceof Error ? error.message : String(error), code: 'INTERNAL' };
  }
  return { isError: true, content: [{ type: 'text', text: `${body.code}: ${body.error}\n${JSON.stringify(body)}` }] };
}

/** `channel_id` of a call, else the pod's channel, else a tool error saying how to give one. */
export function channelOf(args: { channel_id?: number }, env: McpEnvironment): number {
  const id = args.channel_id ?? env.defaultChannelId;
  if (id === null) throw new ToolInputError('channel_id', 'channel_id is required: this server has no default channel (DROVER_CHANNEL_ID is not set)');
  return id;
}
