/** Loops, repositories, runners (docs/mcp.md), and report_status for an agent in autopilot. */
import fs from 'node:fs';
import { z } from 'zod';
import { ToolInputError, tool } from '../tool.ts';

export const otherTools = [
  tool({
    name: 'loop_list',
    title: 'List loops',
    description: "The organization's loops (templated prompts run on a schedule or on demand), newest first.",
    input: {},
    scope: 'loops:read',
    async run(_args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/loops', { params: { path: client.path } }));
    },
  }),
  tool({
    name: 'loop_trigger',
    title: 'Trigger a loop',
    description: "Starts a run of a loop now, with values for its template's variables; answers the run.",
    input: { slug: z.string().min(1).max(100).describe("the loop's slug"), variables: z.record(z.string(), z.string()).optional().describe('template variables') },
    scope: 'loops:write',
    async run(args, { client }) {
      return client.call(
        client.api.POST('/api/v1/ext/orgs/{org}/loops/{slug}/trigger', { params: { path: { ...client.path, slug: args.slug } }, body: { variables: args.variables } }),
      );
    },
  }),
  tool({
    name: 'repository_list',
    title: 'List repositories',
    description: "The organization's repositories: id, name, provider, URL, default branch.",
    input: {},
    scope: 'repos:read',
    async run(_args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/repositories', { params: { path: client.path } }));
    },
  }),
  tool({
    name: 'runner_list',
    title: 'List runners',
    description: "The organization's runners: status, agents they offer, pods and capacity.",
    input: {},
    scope: 'runners:read',
    async run(_args, { client }) {
      return client.call(client.api.GET('/api/v1/ext/orgs/{org}/runners', { params: { path: client.path } }));
    },
  }),
  tool({
    name: 'report_status',
    title: 'Report the autopilot status',
    description:
      'Inside a pod in autopilot: tells Drover how this iteration ended. "done": the task is finished; "continue": another iteration is needed; "failed": it cannot be done. ' +
      'The summary says what happened.',
    input: { status: z.enum(['done', 'continue', 'failed']), summary: z.string().max(64 * 1024).describe('what was done, or why not') },
    scope: null,
    podOnly: true,
    async run(args, { env }) {
      if (env.statusFile === null) throw new ToolInputError('status', 'report_status works only inside a Drover pod (DROVER_STATUS_FILE is not set)');
      const line = `${JSON.stringify({ status: args.status, summary: args.summary })}\n`;
      // Written beside the file and renamed over it: the runner never reads half a report.
      const temporary = `${env.statusFile}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, line);
      fs.renameSync(temporary, env.statusFile);
      return { value: { reported: { status: args.status, summary: args.summary } } };
    },
  }),
];
