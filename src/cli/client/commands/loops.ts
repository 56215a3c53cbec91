import { CONCURRENCY_POLICIES, EXECUTION_MODES, RUN_STATUSES, SANDBOX_STRATEGIES } from '../../../protocol/enums.ts';
import { ORG_BASE, type Answer, type DroverClient, type Schemas, type paths } from '../../../client/index.ts';

type CreateBody = NonNullable<paths['/api/v1/ext/orgs/{org}/loops']['post']['requestBody']>['content']['application/json'];
type UpdateBody = NonNullable<paths['/api/v1/ext/orgs/{org}/loops/{slug}']['put']['requestBody']>['content']['application/json'];
import fs from 'node:fs';
import { Names, actorName, actorText, namesFor } from '../names.ts';
import { runIdByNumber } from '../run-numbers.ts';
import { EXIT, UsageError, defined, pageOptions, pageQuery, pairs, read, type Command, type CommandContext, type OptionSpec, type Parsed } from '../framework.ts';
import { pageNote, record, show, table, when, type Column } from '../output.ts';
import { deliveryText } from '../delivery-view.ts';

const LOOP_ENUMS = { execution_mode: EXECUTION_MODES, sandbox_strategy: SANDBOX_STRATEGIES, concurrency_policy: CONCURRENCY_POLICIES };
const ACTIVE = new Set(['queued', 'pending', 'running']);

const loopColumns: Column<Schemas['Loop']>[] = [
  { header: 'SLUG', value: (l) => l.slug },
  { header: 'STATUS', value: (l) => l.status },
  { header: 'AGENT', value: (l) => l.agent_slug ?? l.custom_agent_slug },
  { header: 'CRON', value: (l) => (l.cron_expression ? `${l.cron_expression} (${l.cron_timezone})` : null) },
  { header: 'NEXT RUN', value: (l) => when(l.next_run_at) },
  { header: 'RUNS', value: (l) => `${l.total_runs} (${l.successful_runs} ok, ${l.failed_runs} failed, ${l.cancelled_runs} cancelled, ${l.active_run_count} active)` },
  { header: 'NAME', value: (l) => l.name, max: 40 },
];

const runColumns: Column<Schemas['Run']>[] = [
  { header: '#', value: (r) => r.run_number },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'TRIGGER', value: (r) => r.trigger_type },
  { header: 'BY', value: (r) => actorName(r.triggered_by), max: 24 },
  { header: 'POD', value: (r) => r.pod_key },
  { header: 'STARTED', value: (r) => when(r.started_at) },
  { header: 'SECONDS', value: (r) => (r.duration_sec === null ? null : Math.round(r.duration_sec)) },
  { header: 'ERROR', value: (r) => r.error_message, max: 50 },
];

/** The callback secret is shown by --json only: a table on a shared screen is no place for it. Repository and runner by name. */
const showLoop = (names: Names) => (data: { loop: Schemas['Loop'] }) =>
  record(
    { ...data.loop, repository_id: names.label('repository', data.loop.repository_id), runner_id: names.label('runner', data.loop.runner_id) },
    { callback_secret: '(hidden; --json shows it)' },
  );
/** Shows a loop answer, with the names its record needs. */
const loopShown = async (ctx: CommandContext, answer: Answer<{ loop: Schemas['Loop'] }>) => show(ctx, answer, showLoop(await namesFor(ctx, 'repository', 'runner')));
const showRun = (data: { run: Schemas['Run'] }) => record({ ...data.run, triggered_by: actorText(data.run.triggered_by), delivery: deliveryText(data.run.delivery) });

const fields: Record<string, OptionSpec> = {
  name: { type: 'string', value: 'NAME', description: 'name, 1–255 characters' },
  'prompt-template': { type: 'string', value: 'TEXT', description: 'the prompt, with {{name}} placeholders' },
  description: { type: 'string', value: 'TEXT', description: 'description' },
  agent: { type: 'string', value: 'SLUG', description: 'a built-in agent' },
  'custom-agent': { type: 'string', value: 'SLUG', description: "a custom agent of the organization (instead of --agent)" },
  preset: { type: 'string', value: 'NAME', description: "a preset of the organization (instead of --agent: its agent and lines, the loop's on top)" },
  labels: { type: 'string', value: 'L1,L2', description: 'runs only on runners carrying all of these labels' },
  var: { type: 'string', multiple: true, value: 'NAME=VALUE', description: 'a default value for a placeholder' },
  repository: { type: 'string', value: 'NAME|ID', description: 'repository cloned into the workspace (name, owner/name or id)' },
  runner: { type: 'string', value: 'NAME|ID', description: 'preferred runner (name or id)' },
  agentfile: { type: 'string', value: 'FILE', description: 'agentfile lines every run\'s pod gets (CREDENTIAL, ENV, CONFIG; "-" reads stdin)' },
  branch: { type: 'string', value: 'NAME', description: 'branch to check out' },
  mode: { type: 'string', value: 'MODE', description: 'direct or autopilot' },
  cron: { type: 'string', value: 'EXPR', description: 'five-field cron schedule, e.g. "0 9 * * MON-FRI"' },
  timezone: { type: 'string', value: 'ZONE', description: 'IANA time zone of the schedule (default UTC)' },
  sandbox: { type: 'string', value: 'STRATEGY', description: 'persistent or fresh workspace per run' },
  'session-persistence': { type: 'string', value: 'true|false', description: 'resume the agent session across runs' },
  concurrency: { type: 'string', value: 'POLICY', description: 'skip, queue or replace' },
  'max-concurrent-runs': { type: 'string', value: 'N', description: '1–100' },
  'timeout-minutes': { type: 'string', value: 'N', description: 'run timeout, 1–10080' },
  'callback-url': { type: 'string', value: 'URL', description: 'webhook called when a run ends' },
  'max-iterations': { type: 'string', value: 'N', description: 'autopilot: at most N iterations' },
  'iteration-timeout-sec': { type: 'string', value: 'N', description: 'autopilot: seconds per iteration' },
};

/** `--agentfile FILE` (`-`: stdin) as text; `none` clears it on update. */
async function agentfileOf(ctx: CommandContext, p: Parsed, update: boolean): Promise<string | null | undefined> {
  const file = read.string(p, 'agentfile');
  if (file === undefined) return undefined;
  if (file === 'none' && update) return null;
  if (file === '-') return ctx.readStdin();
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--agentfile: ${(error as Error).message}`);
  }
}

/** The loop body from the flags; `none` clears a nullable field on update (create takes no null). */
async function loopBody(ctx: CommandContext, p: Parsed, update: boolean): Promise<UpdateBody> {
  const names = new Names(ctx.client());
  const optionalText = (name: string) => (update ? read.stringOrNone(p, name) : read.string(p, name));
  const optionalId = async (kind: 'repository' | 'runner') => {
    const value = read.string(p, kind);
    if (value === undefined || (update && value === 'none')) return value === undefined ? undefined : null;
    return names.idOf(kind, kind, value);
  };
  const vars = read.strings(p, 'var');
  const iterations = read.integer(p, 'max-iterations', 1);
  const iterationTimeout = read.integer(p, 'iteration-timeout-sec', 1);
  return defined({
    name: read.string(p, 'name'),
    prompt_template: read.string(p, 'prompt-template'),
    description: optionalText('description'),
    agent_slug: optionalText('agent'),
    custom_agent_slug: optionalText('custom-agent'),
    preset: optionalText('preset'),
    runner_labels: read.string(p, 'labels')?.split(',').map((l) => l.trim()).filter(Boolean),
    prompt_variables: vars.length > 0 ? pairs(vars, 'var') : undefined,
    repository_id: await optionalId('repository'),
    runner_id: await optionalId('runner'),
    agentfile_layer: await agentfileOf(ctx, p, update),
    branch_name: optionalText('branch'),
    execution_mode: read.oneOf(p, 'mode', LOOP_ENUMS.execution_mode),
    cron_expression: optionalText('cron'),
    cron_timezone: read.string(p, 'timezone'),
    sandbox_strategy: read.oneOf(p, 'sandbox', LOOP_ENUMS.sandbox_strategy),
    session_persistence: read.boolean(p, 'session-persistence'),
    concurrency_policy: read.oneOf(p, 'concurrency', LOOP_ENUMS.concurrency_policy),
    max_concurrent_runs: read.integer(p, 'max-concurrent-runs', 1),
    timeout_minutes: read.integer(p, 'timeout-minutes', 1),
    callback_url: optionalText('callback-url'),
    autopilot_config: iterations === undefined && iterationTimeout === undefined ? undefined : defined({ max_iterations: iterations, iteration_timeout_sec: iterationTimeout }),
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * `--wait`: polls the run (every second, at most every 5 s when it runs long) until it is no
 * longer active. Polling works against any server; the event stream would save the requests.
 */
async function waitForRun(ctx: CommandContext, client: DroverClient, slug: string, started: Answer<{ run: Schemas['Run'] }>): Promise<Answer<{ run: Schemas['Run'] }>> {
  let current = started;
  let interval = 1000;
  while (ACTIVE.has(current.data.run.status) && !ctx.signal.aborted) {
    await sleep(interval, ctx.signal);
    interval = Math.min(interval + 500, 5000);
    const path = { ...client.path, slug, run_id: current.data.run.id };
    current = await client.call(client.api.GET(`${ORG_BASE}/loops/{slug}/runs/{run_id}`, { params: { path } }));
  }
  return current;
}

const slugPath = (client: DroverClient, p: Parsed) => ({ ...client.path, slug: p.positionals[0] });
const runPath = async (client: DroverClient, p: Parsed) => ({ ...slugPath(client, p), run_id: await runIdByNumber(client, p.positionals[0], p.positionals[1]) });
const RUN_NOTE = 'RUN is the run number: # in "drover loops runs", "Run #N" in the dashboard (not the API\'s run id).';

export const loopCommands: Command[] = [
  {
    name: 'loops list',
    summary: 'List loops, newest first.',
    options: pageOptions('default: all of them; at most 100 a page'),
    examples: ['drover loops list'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = pageQuery(p);
      const answer = await client.call(client.api.GET(`${ORG_BASE}/loops`, { params: { path: client.path, query } }));
      show(ctx, answer, (d) => table(d.loops, loopColumns, 'No loops.') + pageNote(d.loops.length, d.total, query.offset ?? 0, 'loops'));
    },
  },
  {
    name: 'loops get',
    summary: 'Show a loop.',
    args: ['SLUG'],
    examples: ['drover loops get nightly-triage'],
    async run(ctx, p) {
      const client = ctx.client();
      await loopShown(ctx, await client.call(client.api.GET(`${ORG_BASE}/loops/{slug}`, { params: { path: slugPath(client, p) } })));
    },
  },
  {
    name: 'loops create',
    summary: 'Create a loop: a templated prompt run on a schedule or on demand.',
    options: { ...fields, slug: { type: 'string', value: 'SLUG', description: 'the slug (default: made from the name)' } },
    notes: ['--name and --prompt-template are required.'],
    examples: [
      "drover loops create --name 'Nightly triage' --agent shell --prompt-template 'echo triage {{area}}' --var area=api --cron '0 3 * * *' --timezone Europe/Berlin",
      "drover loops create --name 'Fix lint' --agent claude-code --prompt-template 'Fix the lint errors' --repository web --branch main --runner build-1 --agentfile loop.agentfile",
    ],
    async run(ctx, p) {
      const client = ctx.client();
      const body = defined({ ...(await loopBody(ctx, p, false)), slug: read.string(p, 'slug') }) as CreateBody;
      if (body.name === undefined || body.prompt_template === undefined) throw new UsageError('--name and --prompt-template are required');
      await loopShown(ctx, await client.call(client.api.POST(`${ORG_BASE}/loops`, { params: { path: client.path }, body })));
    },
  },
  {
    name: 'loops update',
    summary: 'Change a loop: only the given fields change.',
    args: ['SLUG'],
    options: fields,
    notes: ['"none" clears --description, --agent, --custom-agent, --repository, --runner, --branch, --agentfile, --cron and --callback-url.', '--var replaces all default values.'],
    examples: ["drover loops update nightly-triage --cron '30 4 * * *' --concurrency queue", 'drover loops update nightly-triage --cron none'],
    async run(ctx, p) {
      const client = ctx.client();
      const body = await loopBody(ctx, p, true);
      await loopShown(ctx, await client.call(client.api.PUT(`${ORG_BASE}/loops/{slug}`, { params: { path: slugPath(client, p) }, body })));
    },
  },
  {
    name: 'loops delete',
    summary: 'Delete a loop and its run history (active runs are cancelled first).',
    args: ['SLUG'],
    examples: ['drover loops delete nightly-triage'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.DELETE(`${ORG_BASE}/loops/{slug}`, { params: { path: slugPath(client, p) } })), (d) => `${d.message}\n`);
    },
  },
  {
    name: 'loops enable',
    summary: 'Enable a loop: its schedule runs again from now.',
    args: ['SLUG'],
    examples: ['drover loops enable nightly-triage'],
    async run(ctx, p) {
      const client = ctx.client();
      await loopShown(ctx, await client.call(client.api.POST(`${ORG_BASE}/loops/{slug}/enable`, { params: { path: slugPath(client, p) } })));
    },
  },
  {
    name: 'loops disable',
    summary: 'Disable a loop: no scheduled or manual runs; queued runs are cancelled, active ones go on.',
    args: ['SLUG'],
    examples: ['drover loops disable nightly-triage'],
    async run(ctx, p) {
      const client = ctx.client();
      await loopShown(ctx, await client.call(client.api.POST(`${ORG_BASE}/loops/{slug}/disable`, { params: { path: slugPath(client, p) } })));
    },
  },
  {
    name: 'loops trigger',
    summary: 'Start a run now. With --wait, wait until it ends and exit 0 only if it completed.',
    args: ['SLUG'],
    options: {
      var: { type: 'string', multiple: true, value: 'NAME=VALUE', description: "a value for a placeholder (overrides the loop's default)" },
      wait: { type: 'boolean', description: 'wait for the run to end; exit 0 only if it completed' },
    },
    notes: [`With --wait the exit code is 0 if the run completed, ${EXIT.NOT_COMPLETED} if it ended otherwise (failed, cancelled, timeout, skipped).`],
    examples: ['drover loops trigger nightly-triage --var area=web', 'drover loops trigger nightly-triage --wait'],
    async run(ctx, p) {
      const client = ctx.client();
      const vars = read.strings(p, 'var');
      const body = vars.length > 0 ? { variables: pairs(vars, 'var') } : undefined;
      const answer = await client.call(client.api.POST(`${ORG_BASE}/loops/{slug}/trigger`, { params: { path: slugPath(client, p) }, body }));
      if (!read.flag(p, 'wait')) return show(ctx, answer, showRun);
      if (!ctx.json) ctx.err.write(`run #${answer.data.run.run_number} ${answer.data.run.status}; waiting for it to end\n`);
      const ended = await waitForRun(ctx, client, p.positionals[0], answer);
      show(ctx, ended, showRun);
      return ended.data.run.status === 'completed' ? EXIT.OK : EXIT.NOT_COMPLETED;
    },
  },
  {
    name: 'loops runs',
    summary: 'List the runs of a loop, most recent first.',
    args: ['SLUG'],
    options: {
      status: { type: 'string', value: 'STATUS', description: RUN_STATUSES.join(', ') },
      ...pageOptions('default 20, at most 100'),
    },
    examples: ['drover loops runs nightly-triage', 'drover loops runs nightly-triage --status failed'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = { ...pageQuery(p), ...defined({ status: read.oneOf(p, 'status', RUN_STATUSES) }) };
      const answer = await client.call(client.api.GET(`${ORG_BASE}/loops/{slug}/runs`, { params: { path: slugPath(client, p), query } }));
      show(ctx, answer, (d) => table(d.runs, runColumns, 'No runs.') + pageNote(d.runs.length, d.total, d.offset, 'runs'));
    },
  },
  {
    name: 'loops run',
    summary: 'Show one run of a loop.',
    args: ['SLUG', 'RUN'],
    notes: [RUN_NOTE],
    examples: ['drover loops run nightly-triage 3'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.GET(`${ORG_BASE}/loops/{slug}/runs/{run_id}`, { params: { path: await runPath(client, p) } })), showRun);
    },
  },
  {
    name: 'loops cancel',
    summary: 'Cancel an active run (its pod is terminated).',
    args: ['SLUG', 'RUN'],
    notes: [RUN_NOTE],
    examples: ['drover loops cancel nightly-triage 3'],
    async run(ctx, p) {
      const client = ctx.client();
      const path = await runPath(client, p);
      show(ctx, await client.call(client.api.POST(`${ORG_BASE}/loops/{slug}/runs/{run_id}/cancel`, { params: { path } })), (d) => `Run #${d.run.run_number} cancelled.\n`);
    },
  },
];
