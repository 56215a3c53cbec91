import { ORG_BASE, type DroverClient, type Schemas } from '../../../client/index.ts';
import { defined, read, toInteger, type Command, type Parsed } from '../framework.ts';
import { record, show, table, when, type Column } from '../output.ts';

const repositoryColumns: Column<Schemas['Repository']>[] = [
  { header: 'ID', value: (r) => r.id },
  { header: 'NAME', value: (r) => r.name },
  { header: 'FULL NAME', value: (r) => r.full_name },
  { header: 'PROVIDER', value: (r) => r.provider },
  { header: 'DEFAULT', value: (r) => r.default_branch },
  { header: 'URL', value: (r) => r.url, max: 60 },
];

const mergeRequestColumns: Column<Schemas['MergeRequest']>[] = [
  { header: 'ID', value: (m) => m.id },
  { header: 'STATE', value: (m) => m.state },
  { header: 'BRANCHES', value: (m) => `${m.source_branch} → ${m.target_branch}`, max: 50 },
  { header: 'AUTHOR', value: (m) => m.author },
  { header: 'CREATED', value: (m) => when(m.created_at) },
  { header: 'TITLE', value: (m) => m.title, max: 60 },
];

const idPath = (client: DroverClient, p: Parsed) => ({ ...client.path, id: toInteger('ID', p.positionals[0], 1) });

export const repositoryCommands: Command[] = [
  {
    name: 'repos list',
    summary: 'List the repositories of the organization.',
    examples: ['drover repos list'],
    async run(ctx) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.GET(`${ORG_BASE}/repositories`, { params: { path: client.path } })), (d) => table(d.repositories, repositoryColumns, 'No repositories.'));
    },
  },
  {
    name: 'repos get',
    summary: 'Show a repository.',
    args: ['ID'],
    examples: ['drover repos get 1'],
    async run(ctx, p) {
      const client = ctx.client();
      show(ctx, await client.call(client.api.GET(`${ORG_BASE}/repositories/{id}`, { params: { path: idPath(client, p) } })), (d) => record(d.repository));
    },
  },
  {
    name: 'repos branches',
    summary: "List a repository's branches, read live from its Git provider with your own access token.",
    args: ['ID'],
    options: { 'access-token': { type: 'string', value: 'TOKEN', description: 'your Git provider token (default $DROVER_GIT_ACCESS_TOKEN)' } },
    notes: ['The token travels in the X-Git-Access-Token header; prefer DROVER_GIT_ACCESS_TOKEN to keep it out of the process list.'],
    examples: ['drover repos branches 1 --access-token "$GITHUB_TOKEN"', 'DROVER_GIT_ACCESS_TOKEN=ghp_… drover repos branches 1'],
    async run(ctx, p) {
      const client = ctx.client();
      const token = read.string(p, 'access-token') ?? ctx.env.DROVER_GIT_ACCESS_TOKEN;
      const header = defined({ 'x-git-access-token': token });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/repositories/{id}/branches`, { params: { path: idPath(client, p), header } }));
      show(ctx, answer, (d) => (d.branches.length === 0 ? 'No branches.\n' : d.branches.map((b) => `${b}\n`).join('')));
    },
  },
  {
    name: 'repos mrs',
    summary: "List a repository's merge (pull) requests, newest first.",
    args: ['ID'],
    options: {
      branch: { type: 'string', value: 'NAME', description: 'only those from this source branch' },
      state: { type: 'string', value: 'STATE', description: 'opened, merged, closed or all (default all)' },
    },
    examples: ['drover repos mrs 1 --state opened'],
    async run(ctx, p) {
      const client = ctx.client();
      const query = defined({ branch: read.string(p, 'branch'), state: read.oneOf(p, 'state', ['opened', 'merged', 'closed', 'all'] as const) });
      const answer = await client.call(client.api.GET(`${ORG_BASE}/repositories/{id}/merge-requests`, { params: { path: idPath(client, p), query } }));
      show(ctx, answer, (d) => table(d.merge_requests, mergeRequestColumns, 'No merge requests.'));
    },
  },
];
