import { ORG_BASE, type DroverClient, type Schemas } from '../../../client/index.ts';
import { defined, pageOptions, pageQuery, read, toInteger, type Command, type Parsed } from '../framework.ts';
import { pageNote, record, show, table, when, type Column } from '../output.ts';
import { Names } from '../names.ts';
import { POD_STATUSES } from '../../../protocol/enums.ts';
import { podColumns } from './pods.ts';

const runnerColumns: Column<Schemas['Runner']>[] = [
  { header: 'ID', value: (r) => r.id },
  { header: 'NAME', value: (r) => r.name, max: 30 },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'PODS', value: (r) => `${r.pod_count}/${r.max_pods}` },
  { header: 'OS', value: (r) => `${r.os}/${r.arch}` },
  { header: 'VERSION', value: (r) => r.version },
  { header: 'LABELS', value: (r) => r.labels, max: 30 },
  { header: 'HEARTBEAT', value: (r) => when(r.last_heartbeat_at) },
];

const idPath = (client: DroverClient, p: Parsed) => ({ ...client.path, id: toInteger('ID', p.positionals[0], 1) });

export const runnerCommands: Command[] = [
  {
    name: 'runners list',
    summary: 'List the runners of the organization (--available: online ones with free capacity).',
    options: { available: { type: 'boolean', description: 'only runners that can take a pod now' } },
    examples: ['drover runners list', 'drover runners list --available'],
    async run(ctx, p) {
      const client = ctx.client();
      const answer = read.flag(p, 'available')
        ? await client.call(client.api.GET(`${ORG_BASE}/runners/available`, { params: { path: client.path } }))
        : await client.call(client.api.GET(`${ORG_BASE}/runners`, { params: { path: client.path } }));
      show(ctx, answer, (d) => table(d.runners, runnerColumns, 'No runners.'));
    },
  },
  {
    name: 'runners get',
    summary: 'Show a runner.',
    args: ['ID'],
    examples: ['drover runners get 2'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.GET(`${ORG_BASE}/runners/{id}`, { params: { path: idPath(client, p) } })), (d) => record(d.runner));
    },
  },
  {
    name: 'runners pods',
    summary: 'List the pods on a runner, newest first.',
    args: ['ID'],
    options: {
      status: { type: 'string', value: 'STATUS', description: POD_STATUSES.join(', ') },
      ...pageOptions('default 50, at most 100'),
    },
    examples: ['drover runners pods 2 --status running'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = { ...pageQuery(p), ...defined({ status: read.oneOf(p, 'status', POD_STATUSES) }) };
      const answer = await client.call(client.api.GET(`${ORG_BASE}/runners/{id}/pods`, { params: { path: idPath(client, p), query } }));
      show(ctx, answer, (d) => table(d.pods, podColumns(new Names(client)), 'No pods.') + pageNote(d.pods.length, d.total, d.offset, 'pods'));
    },
  },
];
