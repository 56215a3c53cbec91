/** The pod tools (docs/mcp.md): spawn, status, output, wait, terminate. */
import { z } from 'zod';
import { tool } from '../tool.ts';
import { waitForPod } from '../waits.ts';

const podKey = z.string().min(1).max(64).describe('the pod key, e.g. p-abc123…');

/**
 * The agentfile of a spawned pod: the caller's layer with the prompt (a JSON-quoted PROMPT line,
 * which the agentfile grammar reads with JSON's escapes) and the channel added after it, so the
 * layer's own line numbers stay those of the caller's text in error messages.
 */
export function spawnAgentfile(prompt: string, layer: string | undefined, channelId: number | undefined): string {
  const lines = layer && layer.trim() !== '' ? [layer.replace(/\n+$/, '')] : [];
  lines.push(`PROMPT ${JSON.stringify(prompt)}`);
  if (channelId !== undefined) lines.push(`CONFIG channel_id = ${channelId}`);
  return lines.join('\n');
}

export const podTools = [
  tool({
    name: 'pod_spawn',
    title: 'Spawn a pod',
    description:
      'Starts another agent in a pod of its own (inside a pod: a child of this pod, which inherits its channel and ticket unless given, ' +
      'at most 10 active children and 3 levels deep). Answers {"pod": {"pod_key", "status", …}}; follow it with pod_wait and pod_output.',
    input: {
      agent_slug: z.string().min(1).max(100).describe('claude-code, codex, gemini-cli, aider, opencode, shell, or a custom agent'),
      prompt: z.string().describe('the task (for shell: the bash script)'),
      agentfile_layer: z.string().max(64 * 1024).optional().describe('more agentfile lines: MODE, CONFIG, REPO, BRANCH, CREDENTIAL, ENV (not PROMPT)'),
      channel_id: z.number().int().positive().optional().describe("the child's channel (default: this pod's)"),
      ticket_slug: z.string().min(1).max(80).optional().describe("the child's ticket (default: this pod's)"),
    },
    scope: 'pods:write',
    async run(args, { client }) {
      const body = {
        agent_slug: args.agent_slug,
        agentfile_layer: spawnAgentfile(args.prompt, args.agentfile_layer, args.channel_id),
        ...(args.ticket_slug !== undefined ? { ticket_slug: args.ticket_slug } : {}),
      };
      return client.call(client.api.POST('/api/v1/ext/orgs/{org}/pods', { params: { path: client.path }, body }));
    },
  }),
  tool({
    name: 'pod_status',
    title: "A pod's status",
    description: 'A pod: status, result, exit code, error message, usage, parent_pod_key….',
    input: { pod_key: podKey },
    scope: 'pods:read',
    async run(args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/pods/{key}', { params: { path: { ...client.path, key: args.pod_key } } }));
    },
  }),
  tool({
    name: 'pod_output',
    title: "A pod's output",
    description: "The pod's combined stdout and stderr (the last 1 MiB is kept): {output, truncated, total_bytes}.",
    input: { pod_key: podKey, tail_bytes: z.number().int().min(1).max(1024 * 1024).optional().describe('only the last N bytes') },
    scope: 'pods:read',
    async run(args, { client }) {
      return client.call(
        client.api.GET('/api/v1/ext/orgs/{org}/pods/{key}/output', { params: { path: { ...client.path, key: args.pod_key }, query: { tail_bytes: args.tail_bytes } } }),
      );
    },
  }),
  tool({
    name: 'pod_wait',
    title: 'Wait for a pod to end',
    description:
      'Waits until the pod has ended (completed, failed or terminated) or timeout_sec passed (default 120, at most 600). ' +
      'Answers {"pod": {…}, "ended": true|false}.',
    input: { pod_key: podKey, timeout_sec: z.number().int().min(1).max(600).optional().describe('how long to wait, in seconds (default 120, at most 600)') },
    scope: 'pods:read',
    async run(args, { client }, signal) {
      return { value: await waitForPod(client, args.pod_key, (args.timeout_sec ?? 120) * 1000, signal) };
    },
  }),
  tool({
    name: 'pod_terminate',
    title: 'Terminate a pod',
    description: "Stops an active pod (inside a pod: only this pod's own children).",
    input: { pod_key: podKey },
    scope: 'pods:write',
    async run(args, { client }) {
      return client.call(client.api.POST('/api/v1/ext/orgs/{org}/pods/{key}/terminate', { params: { path: { ...client.path, key: args.pod_key } } }));
    },
  }),
];
