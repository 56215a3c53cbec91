import fs from 'node:fs';
import { POD_STATUSES } from '../../../protocol/enums.ts';
import { ORG_BASE, type DroverClient, type Schemas } from '../../../client/index.ts';
import { followOutput } from '../../../client/sse.ts';
import { Names, actorName, actorText, namesFor, pickedId } from '../names.ts';
import { EXIT, UsageError, defined, isoTime, pageOptions, pageQuery, read, type Command, type CommandContext } from '../framework.ts';
import { pageNote, record, show, table, when, type Column } from '../output.ts';
import { RAW_TEXT_OPTION, podOutputPrinter, showPodOutput } from '../terminal.ts';
import { followTranscript, podAgent, printTranscript, transcriptOptions, transcriptWanted } from '../transcript-view.ts';
import { deliveryText } from '../delivery-view.ts';

export const podColumns = (names: Names): Column<Schemas['PodListItem'] | Schemas['RunnerPodItem']>[] => [
  { header: 'KEY', value: (p) => p.key },
  { header: 'STATUS', value: (p) => p.status },
  { header: 'AGENT', value: (p) => p.agent_slug },
  { header: 'RUNNER', value: (p) => ('runner_id' in p ? names.name('runner', p.runner_id) : undefined) },
  { header: 'CREATED', value: (p) => when(p.created_at) },
  { header: 'BY', value: (p) => ('created_by' in p ? actorName(p.created_by) : undefined), max: 24 },
  { header: 'PROMPT', value: (p) => p.prompt, max: 50 },
];

/**
 * Streams a pod's output to stdout until its `end` event (docs/events.md) and answers the end. With
 * --json each event is one JSON line. Terminal control sequences are taken out unless `raw`.
 */
async function streamOutput(ctx: CommandContext, client: DroverClient, key: string, offset: number, raw: boolean): Promise<{ status: string; exit_code: number | null } | null> {
  const retry = (reason: string, ms: number) => ctx.err.write(`drover: ${reason}; reconnecting in ${ms / 1000} s\n`);
  const print = podOutputPrinter(ctx, raw);
  for await (const event of followOutput(client, key, { offset, signal: ctx.signal, onRetry: retry })) {
    if (event.type === 'output') print(event);
    else {
      if (ctx.json) ctx.out.write(`${JSON.stringify({ end: { status: event.status, exit_code: event.exit_code } })}\n`);
      return event;
    }
  }
  return null;
}

/** A pod as a record: its runner and repository by name (and id), who started it. */
const showPod =
  (names: Names) =>
  ({ pod }: { pod: Schemas['Pod'] }) =>
    record({
      ...pod,
      runner_id: names.label('runner', pod.runner_id),
      repository_id: names.label('repository', pod.repository_id),
      created_by: actorText(pod.created_by),
      delivery: deliveryText(pod.delivery),
    });

/** The agentfile for `pods run`: the file's directives, `REPO <id>` for --repository, then the prompt as one JSON-quoted PROMPT line. */
function agentfile(prompt: string | undefined, file: string | undefined, repositoryId: number | undefined): string | undefined {
  const lines: string[] = [];
  if (file !== undefined) {
    try {
      lines.push(fs.readFileSync(file, 'utf8').replace(/\n+$/, ''));
    } catch (error) {
      throw new UsageError(`--agentfile: ${(error as Error).message}`);
    }
  }
  if (repositoryId !== undefined) lines.push(`REPO ${repositoryId}`);
  if (prompt !== undefined) lines.push(`PROMPT ${JSON.stringify(prompt)}`);
  return lines.length > 0 ? lines.join('\n') : undefined;
}

export const podCommands: Command[] = [
  {
    name: 'pods list',
    summary: 'List pods, newest first.',
    options: {
      status: { type: 'string', value: 'STATUS', description: POD_STATUSES.join(', ') },
      ticket: { type: 'string', value: 'SLUG', description: "only this ticket's pods" },
      repository: { type: 'string', value: 'NAME|ID', description: "only this repository's pods (name, owner/name or id)" },
      agent: { type: 'string', value: 'SLUG', description: 'only pods of this agent' },
      runner: { type: 'string', value: 'NAME|ID', description: 'only pods on this runner (name or id)' },
      since: { type: 'string', value: 'TIME', description: 'only pods created after this ISO 8601 time' },
      ...pageOptions('default 20, at most 100'),
    },
    examples: ['drover pods list', 'drover pods list --status running', 'drover pods list --ticket ACME-12', 'drover pods list --repository web --agent claude-code --runner build-1 --since 2026-11-27T08:00:00Z'],
    async run(ctx, p) {
      const client = ctx.client();
      const names = new Names(client);
      const query = {
        ...pageQuery(p),
        ...defined({
          status: read.oneOf(p, 'status', POD_STATUSES),
          ticket_slug: read.string(p, 'ticket'),
          repository_id: await pickedId(names, p, 'repository', 'repository'),
          agent_slug: read.string(p, 'agent'),
          runner_id: await pickedId(names, p, 'runner', 'runner'),
          created_after: isoTime(read.string(p, 'since'), 'since'),
        }),
      };
      const answer = await client.call(client.api.GET(`${ORG_BASE}/pods`, { params: { path: client.path, query } }));
      const shown = ctx.json ? names : await names.load('runner');
      show(ctx, answer, (d) => table(d.pods, podColumns(shown), 'No pods.') + pageNote(d.pods.length, d.total, d.offset, 'pods'));
    },
  },
  {
    name: 'pods get',
    summary: 'Show a pod.',
    args: ['KEY'],
    options: { raw: RAW_TEXT_OPTION },
    examples: ['drover pods get p-1a2b3c4d5e6f7g'],
    async run(ctx, p) {
      const client = ctx.client();
      const answer = await client.call(client.api.GET(`${ORG_BASE}/pods/{key}`, { params: { path: { ...client.path, key: p.positionals[0] } } }));
      show(ctx, answer, showPod(await namesFor(ctx, 'runner', 'repository')));
    },
  },
  {
    name: 'pods run',
    summary: 'Start a pod: an agent run on a runner. With --follow, print its output as it comes and exit with the agent\'s exit code.',
    options: {
      agent: { type: 'string', value: 'SLUG', description: 'the agent (shell, claude-code, codex, …, or a custom agent); this or --preset' },
      preset: { type: 'string', value: 'NAME', description: "a preset of the org (its agent and lines; yours on top): drover admin presets" },
      labels: { type: 'string', value: 'L1,L2', description: 'run only on a runner carrying all of these labels' },
      prompt: { type: 'string', value: 'TEXT', description: 'the prompt ("-" reads it from stdin)' },
      agentfile: { type: 'string', value: 'FILE', description: 'more agentfile directives (MODE, CONFIG, REPO, BRANCH, CREDENTIAL)' },
      runner: { type: 'string', value: 'NAME|ID', description: 'run on this runner' },
      repository: { type: 'string', value: 'NAME|ID', description: 'work in this repository (name, owner/name or id): a REPO line' },
      ticket: { type: 'string', value: 'SLUG', description: 'link a ticket' },
      alias: { type: 'string', value: 'NAME', description: 'a display name' },
      follow: { type: 'boolean', short: 'f', description: 'stream the output; exit with the agent\'s exit code' },
      ...transcriptOptions,
    },
    notes: [
      `With --follow the exit code is the agent's; ${EXIT.NOT_COMPLETED} when the pod ended without one (terminated, failed to start).`,
      'On a terminal, --follow shows the transcript of claude-code, codex, gemini-cli and opencode pods (--raw: the output as printed).',
    ],
    examples: ["drover pods run --agent shell --prompt 'echo hi' --follow", 'drover pods run --agent claude-code --prompt - --runner 2 < task.md'],
    async run(ctx, p) {
      const client = ctx.client();
      const agent = read.string(p, 'agent');
      const preset = read.string(p, 'preset');
      if (!agent && !preset) throw new UsageError('--agent or --preset is required');
      if (agent && preset) throw new UsageError('give --agent or --preset, not both');
      const labels = read.string(p, 'labels')?.split(',').map((l) => l.trim()).filter(Boolean);
      let prompt = read.string(p, 'prompt');
      if (prompt === '-') prompt = await ctx.readStdin();
      const names = new Names(client);
      const body = defined({
        agent_slug: agent,
        preset,
        runner_labels: labels,
        agentfile_layer: agentfile(prompt, read.string(p, 'agentfile'), await pickedId(names, p, 'repository', 'repository')),
        runner_id: await pickedId(names, p, 'runner', 'runner'),
        ticket_slug: read.string(p, 'ticket'),
        alias: read.string(p, 'alias'),
      });
      const created = await client.call(client.api.POST(`${ORG_BASE}/pods`, { params: { path: client.path }, body }));
      if (!read.flag(p, 'follow')) return show(ctx, created, (d) => record(d.pod));
      if (ctx.json) ctx.out.write(`${created.raw}\n`);
      else ctx.err.write(`pod ${created.data.pod.pod_key} ${created.data.pod.status}\n`);
      const key = created.data.pod.pod_key;
      const format = await transcriptWanted(ctx, p, async () => created.data.pod.agent_slug);
      const end = format ? await followTranscript(ctx, client, key, format) : await streamOutput(ctx, client, key, 0, read.flag(p, 'raw'));
      if (!end) return EXIT.NOT_COMPLETED;
      if (!ctx.json) ctx.err.write(`pod ${key} ${end.status}${end.exit_code === null ? '' : ` (exit code ${end.exit_code})`}\n`);
      return end.exit_code ?? (end.status === 'completed' ? EXIT.OK : EXIT.NOT_COMPLETED);
    },
  },
  {
    name: 'pods logs',
    summary: "Print a pod's output (the last 1 MiB is kept); with -f, follow it until the pod ends.",
    args: ['KEY'],
    options: {
      follow: { type: 'boolean', short: 'f', description: 'keep printing new output until the pod ends' },
      tail: { type: 'string', value: 'BYTES', description: 'only the last BYTES bytes' },
      ...transcriptOptions,
    },
    notes: ['On a terminal, the output of claude-code, codex, gemini-cli and opencode pods is shown as their transcript (--raw: as printed).'],
    examples: ['drover pods logs p-1a2b3c4d5e6f7g', 'drover pods logs p-1a2b3c4d5e6f7g -f', 'drover pods logs p-1a2b3c4d5e6f7g --pretty'],
    async run(ctx, p) {
      const client = ctx.client();
      const key = p.positionals[0];
      const tail = read.integer(p, 'tail', 1);
      const format = await transcriptWanted(ctx, p, () => podAgent(client, key));
      if (read.flag(p, 'follow')) {
        let offset = 0;
        if (tail !== undefined) {
          const { data } = await client.call(client.api.GET(`${ORG_BASE}/pods/{key}/output`, { params: { path: { ...client.path, key }, query: { tail_bytes: 1 } } }));
          offset = Math.max(0, data.total_bytes - tail);
        }
        const end = format ? await followTranscript(ctx, client, key, format, offset) : await streamOutput(ctx, client, key, offset, read.flag(p, 'raw'));
        return end ? EXIT.OK : EXIT.NOT_COMPLETED;
      }
      if (format) return printTranscript(ctx, client, key, format, tail);
      const answer = await client.call(client.api.GET(`${ORG_BASE}/pods/{key}/output`, { params: { path: { ...client.path, key }, query: defined({ tail_bytes: tail }) } }));
      showPodOutput(ctx, answer, read.flag(p, 'raw'));
    },
  },
  {
    name: 'pods terminate',
    summary: 'Stop an active pod (SIGTERM to its processes, SIGKILL after 10 s).',
    args: ['KEY'],
    examples: ['drover pods terminate p-1a2b3c4d5e6f7g'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.POST(`${ORG_BASE}/pods/{key}/terminate`, { params: { path: { ...client.path, key: p.positionals[0] } } })), (d) => `${d.message}\n`);
    },
  },
];
