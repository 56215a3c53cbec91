/**
 * The served OpenAPI document against the server, the way an independent fuzzer (Schemathesis)
 * checks it: for every operation, inputs generated from the document's own schemas.
 *
 * - Valid inputs are accepted: a 2xx, or a status the operation declares for a reason the schema
 *   cannot state (a 404 for an id that does not exist, a 409 state conflict, a 400 about one of the
 *   fields listed in SERVER_CHECKED, whose values only the server can judge). Never a 5xx, never a
 *   400 about a field the schema covers.
 * - Invalid inputs (a valid request broken in one place, in each way the schemas say it can be)
 *   get a 4xx with the error body.
 * - Every response has a status the operation declares, matches that response's schema, and
 *   carries X-Request-Id (and Retry-After on 429); an operation that needs a key refuses none.
 * - Each operation is accepted at least once (a 2xx), so the check is not passed by 404s alone.
 *
 * A 502 is accepted where the operation declares it (repositories the fuzzer registers name Git
 * providers this machine cannot reach), and a 503 (no runner offers the agent: the runners the
 * fuzzer registers never connect).
 *
 * Inputs come from fast-check with a fixed seed (FUZZ_SEED overrides it, FUZZ_RUNS the number of
 * cases per operation and kind), so a failure is reproducible and shrunk to a small case.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORGS_PREFIX_OPERATION_SUFFIX } from '../../src/api/openapi.ts';
import { BODY_LIMIT_BYTES } from '../../src/api/plugins/json-body.ts';
import { MAX_DOCUMENT } from '../../src/domain/channels/model.ts';
import { TICKET_TYPES } from '../../src/protocol/enums.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { openApiDocument } from '../helpers/openapi.ts';
import { SchemaValidator, declaredResponse, operationsOf, resolvePointer, resolveResponse, type OpenApiDocument, type WalkedOperation } from '../helpers/openapi-walk.ts';
import { insertRunner } from '../helpers/runners.ts';
import { savePodPatch } from '../../src/store/pod-patches.ts';
import { valueFor, type Schema, type SchemaContext } from '../helpers/schema-arbitrary.ts';
import { violations, type RequestParts } from '../helpers/schema-violations.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

/**
 * Fields whose values only the server can judge, by operation: ids and slugs that must name
 * records of the organization, agents that must exist, agentfile lines, cron fields that must
 * make a date, zones that must be in the time zone data, template values that must cover the
 * placeholders, the branches token that one of two parameters must carry, and channel names
 * (judged once NFKC-normalized and trimmed, which no pattern states). Each is described
 * in the document. A valid input refused with a 400 about any other field fails the test.
 */
const SERVER_CHECKED: Record<string, string[]> = {
  createTicket: ['/assignee_id', '/repository_id', '/parent_slug'],
  updateTicket: ['/assignee_id', '/parent_slug'],
  createChannel: ['/name', '/repository_id', '/ticket_slug'],
  updateChannel: ['/name'],
  postChannelMessage: ['/pod_key'],
  createPod: ['/agent_slug', '/agentfile_layer', '/ticket_slug', '/runner_id', '/preset'],
  createLoop: ['/agent_slug', '/custom_agent_slug', '/repository_id', '/runner_id', '/cron_expression', '/cron_timezone', '/callback_url', '/agentfile_layer', '/branch_name', '/preset'],
  updateLoop: ['/agent_slug', '/custom_agent_slug', '/repository_id', '/runner_id', '/cron_expression', '/cron_timezone', '/callback_url', '/agentfile_layer', '/branch_name', '/preset'],
  createPreset: ['/agent_slug', '/agentfile_layer'],
  updatePreset: ['/agent_slug', '/agentfile_layer'],
  listActivity: ['types', 'to'],
  triggerLoop: ['/variables'],
  listRepositoryBranches: ['access_token'],
  createApiKey: ['/expires_at', '/user_id'],
  updateOrg: ['/network_allow'],
  adminCreateRepository: ['/full_name', '/url', '/api_base_url'],
  adminUpdateRepository: ['/full_name', '/url', '/api_base_url'],
};

/** Operations that change what later cases address run last, in this order. */
const LAST = ['adminUpdateQuotas', 'disableLoop', 'cancelLoopRun', 'redeliverLoopRun', 'terminatePod', 'deleteTicket', 'deleteLoop', 'revokeApiKey', 'deleteUser', 'deleteCustomAgent', 'deletePreset', 'adminUpdateRepository', 'adminDeleteRepository', 'adminDeleteRunner'];

const baseId = (id: string) => id.replace(new RegExp(`${ORGS_PREFIX_OPERATION_SUFFIX}$`), '');

interface Fixtures {
  ticketSlugs: string[];
  channelIds: number[];
  loopSlugs: string[];
  runIds: number[];
  podKeys: string[];
  runnerIds: number[];
  repositoryIds: number[];
  userIds: number[];
  customAgents: string[];
  presetNames: string[];
  spareKeyIds: number[];
  registrationTokens: string[];
  gitRemote: string;
}

const pick = <T>(values: T[]) => fc.constantFrom(...values);

/** Values that exist, by property name, so that valid requests can succeed. */
function bodyHints(f: Fixtures): (name: string) => fc.Arbitrary<unknown> | undefined {
  return (name) => {
    switch (name) {
      case 'repository_id':
        return pick(f.repositoryIds);
      case 'assignee_id':
        return pick(f.userIds);
      case 'runner_id':
        return pick(f.runnerIds);
      case 'ticket_slug':
      case 'parent_slug':
        return pick(f.ticketSlugs);
      case 'agent_slug':
        return fc.constant('shell');
      case 'custom_agent_slug':
        return pick(f.customAgents);
      case 'preset':
        return pick(f.presetNames);
      case 'user_id':
        return pick(f.userIds);
      case 'pod_key':
        return pick(f.podKeys);
      case 'cron_expression':
        return pick(['0 9 * * MON-FRI', '*/15 * * * *', '30 2 1 * *']);
      case 'cron_timezone':
        return pick(['UTC', 'Europe/Berlin', 'america/new_york', 'Etc/GMT+5']);
      case 'agentfile_layer':
        return pick(['PROMPT "echo hi"', 'MODE direct\nPROMPT <<END\necho one\necho two\nEND']);
      case 'expires_at':
        return fc.integer({ min: 1, max: 10_000 }).map((days) => new Date(Date.now() + days * 86_400_000).toISOString());
      case 'token':
        return pick(f.registrationTokens);
      case 'url':
        return pick([f.gitRemote, 'https://github.com/acme/web.git']);
      case 'full_name':
        return fc.constant('acme/web');
      case 'api_base_url':
        return fc.constant('https://gitlab.example.com/api/v4');
      case 'idempotency-key':
        return fc.uuid(); // a key repeated with another body is a 409, rightly
      case 'access_token':
      case 'x-git-access-token':
        return fc.constant('any-token');
      case 'variables':
      case 'prompt_variables':
        return fc.dictionary(fc.constantFrom('who', 'area'), fc.string({ maxLength: 10 }), { maxKeys: 2 });
      default:
        return undefined;
    }
  };
}

/** Path parameters that exist, by the path they stand in. */
function pathHint(f: Fixtures, route: string, name: string): fc.Arbitrary<unknown> | undefined {
  if (name === 'org') return fc.constant('acme');
  if (name === 'run_id') return pick(f.runIds);
  if (name === 'key') return pick(f.podKeys);
  const owner = route.slice(0, route.indexOf(`{${name}}`));
  if (name === 'slug') return owner.endsWith('/tickets/') ? pick(f.ticketSlugs) : owner.endsWith('/agents/') ? pick(f.customAgents) : pick(f.loopSlugs);
  if (owner.endsWith('/users/')) return pick(f.userIds);
  if (owner.endsWith('/presets/')) return pick(f.presetNames);
  if (owner.endsWith('/channels/')) return pick(f.channelIds);
  if (owner.endsWith('/runners/')) return pick(f.runnerIds);
  if (owner.endsWith('/repositories/')) return pick(f.repositoryIds);
  if (owner.endsWith('/api-keys/')) return pick(f.spareKeyIds);
  return undefined;
}

/** A valid request for an operation, drawn from its parameters and body schema. */
function validRequest(document: OpenApiDocument, walked: WalkedOperation, f: Fixtures): fc.Arbitrary<RequestParts> {
  const { operation, path: route } = walked;
  const hints = bodyHints(f);
  const ctx: SchemaContext = { resolve: (ref) => resolvePointer<Schema>(document, ref), hint: (name) => hints(name) };
  const parts: Record<'path' | 'query' | 'header', Record<string, fc.Arbitrary<unknown>>> = { path: {}, query: {}, header: {} };
  const required: Record<'path' | 'query' | 'header', string[]> = { path: [], query: [], header: [] };
  for (const parameter of operation.parameters ?? []) {
    const generic = valueFor(parameter.schema, { resolve: ctx.resolve });
    const hinted = parameter.in === 'path' ? pathHint(f, route, parameter.name) : hints(parameter.name);
    // Revoking a random key id could revoke the key this test runs with: only spare keys.
    const always = parameter.name === 'org' || route.includes('/api-keys/');
    parts[parameter.in][parameter.name] = hinted ? (always ? hinted : fc.oneof({ weight: 5, arbitrary: hinted }, { weight: 1, arbitrary: generic })) : generic;
    if (parameter.required || parameter.in === 'path') required[parameter.in].push(parameter.name);
  }
  const record = (where: 'path' | 'query' | 'header') => fc.record(parts[where], { requiredKeys: required[where] });
  const bodySchema = operation.requestBody?.content['application/json']?.schema;
  const body: fc.Arbitrary<unknown> = bodySchema
    ? operation.requestBody!.required
      ? valueFor(bodySchema, ctx)
      : fc.option(valueFor(bodySchema, ctx), { nil: undefined })
    : fc.constant(undefined);
  return fc.record({ path: record('path'), query: record('query'), headers: record('header'), body }).map((r) => ({
    ...r,
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])),
  }));
}

function urlOf(route: string, request: RequestParts): string {
  const pathPart = route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(request.path[name])));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query)) if (value !== undefined) query.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  const search = query.toString();
  return search ? `${pathPart}?${search}` : pathPart;
}

/** The credential an operation's security asks for. */
function credentials(walked: WalkedOperation, t: TestApp): Record<string, string> {
  const security = walked.operation.security;
  if (security && security.length === 0) return {};
  if (security?.some((s) => 'adminToken' in s)) return { authorization: `Bearer ${ADMIN_TOKEN}` };
  return { 'x-api-key': t.key };
}

function send(t: TestApp, walked: WalkedOperation, request: RequestParts, auth = true): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...request.headers, ...(auth ? credentials(walked, t) : {}) };
  let payload: string | undefined;
  if (request.rawBody !== undefined || request.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = request.rawBody ?? JSON.stringify(request.body);
  }
  const answer = t.app.inject({ method: walked.method.toUpperCase() as 'GET', url: urlOf(walked.path, request), headers, payload });
  // An event stream that was opened never ends: fail instead of waiting for it.
  let timer: NodeJS.Timeout | undefined;
  const opened = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${walked.operation.operationId}: no complete answer in 10 s (a stream opened?) for ${JSON.stringify(request).slice(0, 300)}`)), 10_000);
  });
  return Promise.race([answer, opened]).finally(() => clearTimeout(timer));
}

/** The response's status is declared; its body matches the declared schema; the declared headers are there. */
function expectDeclared(document: OpenApiDocument, validator: SchemaValidator, walked: WalkedOperation, res: LightMyRequestResponse, what: string): void {
  const label = `${walked.operation.operationId} ${what} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  const declared = declaredResponse(document, walked.operation, res.statusCode);
  expect(declared, `undeclared status: ${label}`).toBeDefined();
  expect(res.headers['x-request-id'], label).toMatch(/^req_/);
  if (res.statusCode === 429) expect(res.headers['retry-after'], label).toMatch(/^\d+$/);
  const media = declared!.content?.['application/json'];
  if (!media) return;
  expect(res.headers['content-type'], label).toMatch(/^application\/json/);
  const problem = validator.check(media.schema, JSON.parse(res.body));
  expect(problem, `response does not match its schema (${problem}): ${label}`).toBeNull();
}

/** A valid input was accepted, or refused only for a reason the schema cannot state. */
function expectAccepted(walked: WalkedOperation, res: LightMyRequestResponse, what: string): void {
  const id = baseId(walked.operation.operationId);
  const label = `${id} valid ${what} → ${res.statusCode} ${res.body.slice(0, 400)}`;
  const status = res.statusCode;
  // 502: the operation reads a Git provider, and the repository names one this machine cannot reach.
  if (status === 502 && walked.operation.responses['502']) return;
  // 503: no runner offers the agent (the fuzzer's own runners never connect): a state, like a 409.
  if (status === 503 && walked.operation.responses['503']) return;
  expect(status, `a valid input got a server error: ${label}`).toBeLessThan(500);
  if (status < 400) return;
  const hasIds = (walked.operation.parameters ?? []).some((p) => p.in === 'path' && p.name !== 'org');
  if (status === 404) return void expect(hasIds, `404 for an operation addressing nothing but its org: ${label}`).toBe(true);
  if (status === 409) return;
  if (status === 401 && id === 'registerRunner') return; // a registration token that is unknown or used up
  expect(status, `a valid input refused: ${label}`).toBe(400);
  const fields = ((JSON.parse(res.body) as { details?: { field: string }[] }).details ?? []).map((d) => d.field);
  const allowed = SERVER_CHECKED[id] ?? [];
  expect(fields.length, label).toBeGreaterThan(0);
  // An entry names a field, or an array whose items only the server can judge (`/network_allow` covers `/network_allow/3`).
  for (const field of fields) expect(allowed.some((a) => field === a || field.startsWith(`${a}/`)), `a valid input refused for ${field}, which the schema covers: ${label}`).toBe(true);
}

const statically = (await openApiDocument()) as OpenApiDocument;
const ORDERED = operationsOf(statically).sort((a, b) => LAST.indexOf(baseId(a.operation.operationId)) - LAST.indexOf(baseId(b.operation.operationId)));

async function adminPost<T>(t: TestApp, url: string, payload: unknown): Promise<T> {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: payload as object });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as T;
}

/** Creating requests for the fixtures, through the API. */
function creator(t: TestApp) {
  const post = async <T>(url: string, payload: unknown): Promise<T> => {
    const res = await t.request({ method: 'POST', url: t.path(url), payload: payload as object });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as T;
  };
  const times = async <T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> => {
    const made: T[] = [];
    for (let i = 0; i < n; i++) made.push(await make(i));
    return made;
  };
  let loops = 0;
  let channels = 0;
  const loop = async () =>
    (await post<{ loop: { slug: string } }>('/loops', {
      name: `fixture ${++loops}`,
      agent_slug: 'shell',
      prompt_template: 'echo {{who}}',
      prompt_variables: { who: 'x' },
      concurrency_policy: 'queue',
    })).loop.slug;
  return {
    tickets: (n: number) => times(n, async (i) => (await post<{ ticket: { slug: string } }>('/tickets', { type: 'bug', title: `fixture ${i}` })).ticket.slug),
    loops: (n: number) => times(n, loop),
    /** Active runs (the first pending, the others queued behind it), all of one new loop. */
    runs: async (n: number) => {
      const slug = await loop();
      return { slug, ids: await times(n, async () => (await post<{ run: { id: number } }>(`/loops/${slug}/trigger`, {})).run.id) };
    },
    pods: (n: number) => times(n, async () => (await post<{ pod: { pod_key: string } }>('/pods', { agent_slug: 'shell', agentfile_layer: 'PROMPT "sleep 100"' })).pod.pod_key),
    keys: (n: number) => times(n, async () => (await t.issueKey(['tickets:read'])).id),
    channels: (n: number) => times(n, async () => (await post<{ channel: { id: number } }>('/channels', { name: `fixture ${++channels}` })).channel.id),
  };
}

let presetSeq = 0;
async function sparePresets(t: TestApp): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < 5; i++) names.push((await adminPost<{ preset: { name: string } }>(t, '/orgs/acme/presets', { name: `fx-${++presetSeq}`, agent_slug: 'shell', agentfile_layer: 'ENV FX "1"' })).preset.name);
  return names;
}

async function createFixtures(t: TestApp, scratch: string): Promise<Fixtures> {
  const make = creator(t);
  const gitRemote = path.join(scratch, 'remote.git');
  execFileSync('git', ['init', '--quiet', '--bare', gitRemote]);
  const repository = await adminPost<{ repository: { id: number } }>(t, '/orgs/acme/repositories', { name: 'web', full_name: 'acme/web', provider: 'git', url: gitRemote });
  const user = await adminPost<{ user: { id: number } }>(t, '/orgs/acme/users', { name: 'Ann', email: 'ann@example.com' });
  const agent = await adminPost<{ agent: { slug: string } }>(t, '/orgs/acme/agents', { slug: 'echoer', name: 'Echoer', command: 'echo' });
  const runnerId = await insertRunner(t.store, t.org.id);
  const runs = await make.runs(4);
  const registrationTokens = [];
  for (let i = 0; i < 5; i++) registrationTokens.push((await adminPost<{ token: string }>(t, '/orgs/acme/runner-tokens', {})).token);
  return {
    ticketSlugs: await make.tickets(6),
    channelIds: await make.channels(2),
    loopSlugs: [runs.slug, ...(await make.loops(3))],
    runIds: runs.ids,
    podKeys: await make.pods(6),
    runnerIds: [runnerId],
    repositoryIds: [repository.repository.id],
    userIds: [user.user.id],
    customAgents: [agent.agent.slug],
    presetNames: await sparePresets(t),
    spareKeyIds: await make.keys(5),
    registrationTokens,
    gitRemote,
  };
}

/** Operations that use up what they address get new targets first (the two copies of the loop endpoints each need their own). */
async function refreshTargets(t: TestApp, f: Fixtures, id: string): Promise<void> {
  // The fixture runner has no process behind it: it stays online (for pod placement) only while it seems to heartbeat.
  await t.store.db.updateTable('runners').set({ last_heartbeat_at: Date.now() }).where('id', 'in', f.runnerIds).execute();
  const make = creator(t);
  if (id === 'cancelLoopRun' || id === 'deleteLoop') {
    const runs = await make.runs(4);
    f.loopSlugs = [runs.slug, ...(await make.loops(3))];
    f.runIds = runs.ids;
  }
  if (id === 'deleteTicket') f.ticketSlugs = await make.tickets(6);
  // Runs whose callback event was sent (earlier cases ended runs of loops with a callback_url), their
  // deliveries settled, under a loop that has a callback_url now: what a redelivery needs.
  if (id === 'redeliverLoopRun') {
    const sent = await t.store.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('loop_runs as r', 'r.id', 'd.subject_id')
      .innerJoin('loops as l', 'l.id', 'r.loop_id')
      .where('d.subject_type', '=', 'loop_run')
      .where('l.callback_url', 'is not', null)
      .select(['r.id as run_id', 'l.slug as slug'])
      .orderBy('r.id', 'desc')
      .limit(1)
      .execute();
    expect(sent.length, 'a run with a callback event').toBe(1);
    await t.store.db.updateTable('webhook_deliveries').set({ status: 'failed' }).where('status', '=', 'pending').execute();
    f.runIds = [sent[0].run_id];
    f.loopSlugs = [sent[0].slug];
  }
  if (id === 'postChannelMessage') f.channelIds = await make.channels(2); // earlier updates may have archived them
  if (id === 'terminatePod') f.podKeys = await make.pods(6);
  // A pod's work is kept once its runner delivered it: every fixture pod gets a patch.
  if (id === 'getPodPatch') {
    const rows = await t.store.db.selectFrom('pods').select('id').where('key', 'in', f.podKeys).execute();
    for (const row of rows) await savePodPatch(t.store.db, row.id, 'From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] work\n', Date.now());
  }
  if (id === 'revokeApiKey') f.spareKeyIds = await make.keys(5);
  // The fixture agent is in use by now (loops name it): deletes address agents nothing uses.
  // Loops may name the fixture presets by now: deletes address presets nothing uses.
  if (id === 'deletePreset') f.presetNames = await sparePresets(t);
  if (id === 'deleteCustomAgent') {
    f.customAgents = [];
    for (let i = 0; i < 5; i++) f.customAgents.push((await adminPost<{ agent: { slug: string } }>(t, '/orgs/acme/agents', { slug: `spare-${Date.now()}-${i}`, name: 'Spare', command: 'echo' })).agent.slug);
  }
}

/** Every string schema a request can carry (parameters and bodies, nested), with where it stands. */
function requestStrings(document: OpenApiDocument): { where: string; schema: Schema }[] {
  const found: { where: string; schema: Schema }[] = [];
  const seen = new Set<Schema>();
  const walk = (input: Schema, where: string) => {
    const schema = input.$ref ? resolvePointer<Schema>(document, input.$ref) : input;
    if (seen.has(schema)) return;
    seen.add(schema);
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes('string') && !schema.enum && schema.const === undefined) found.push({ where, schema });
    for (const [name, property] of Object.entries(schema.properties ?? {})) walk(property, `${where}.${name}`);
    if (schema.items) walk(schema.items, `${where}[]`);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}{}`);
    if (schema.propertyNames) walk({ type: 'string', ...schema.propertyNames }, `${where} (names)`);
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(branch, where);
  };
  for (const { method, path: route, operation } of operationsOf(document)) {
    for (const parameter of operation.parameters ?? []) walk(parameter.schema, `${method} ${route} ${parameter.in} ${parameter.name}`);
    const body = operation.requestBody?.content['application/json']?.schema;
    if (body) walk(body, `${method} ${route} body`);
  }
  return found;
}

describe('the OpenAPI document states what clients need', () => {
  const operations = operationsOf(statically);

  it('names every operation once', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id)), ids.join(' ')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names the scope of every operation an API key calls, the admin token where that is needed, and no credential for health and registration', () => {
    for (const { path: route, operation } of operations) {
      // /metrics is for operators: the admin token too (docs/decisions.md).
      if (route.startsWith('/api/v1/admin/') || route === '/metrics') expect(operation.security, route).toEqual([{ adminToken: [] }]);
      else if (route.startsWith('/api/v1/ext/orgs/') || route.startsWith('/api/v1/orgs/')) {
        expect(operation.security, route).toBeUndefined(); // the document's: X-API-Key or Bearer
        // One scope, except the event stream (any read scope opens it: each event type needs its own)
        // and whoami (any valid credential of the organization, docs/mcp.md's drover mcp asks it).
        // GET /activity likewise; GET /users and /presets are for any credential (pickers).
        const anyCredential = ['/auth/whoami', '/users', '/presets'].some((end) => route.endsWith(end));
        expect(operation['x-required-scopes']?.length, route).toBe(route.endsWith('/events') || route.endsWith('/activity') ? 5 : anyCredential ? 0 : 1);
        for (const scope of operation['x-required-scopes']!) expect(scope, route).toMatch(/^(pods|tickets|channels|runners|repos|loops):(read|write)$/);
      } else expect(operation.security, route).toEqual([]);
    }
    expect(statically.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
  });

  it('declares Idempotency-Key on every creating POST of the API, and no required body where none is required', () => {
    for (const { method, path: route, operation } of operations) {
      const creates = method === 'post' && '201' in operation.responses && route.includes('/orgs/{org}/') && !route.startsWith('/api/v1/admin/');
      const header = (operation.parameters ?? []).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      expect(Boolean(header), `${method} ${route}`).toBe(creates);
    }
    const optional = operations.filter((o) => /\/(enable|disable|trigger|cancel)$/.test(o.path) || (o.method === 'delete' && o.path.includes('/loops/')));
    expect(optional.length).toBe(2 * 5);
    for (const { path: route, operation } of optional) expect(operation.requestBody?.required, route).toBe(false);
  });

  it('gives every error response the error schema, every response X-Request-Id, and 429 Retry-After; 500 is declared everywhere but the probes', () => {
    for (const { method, path: route, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const resolved = response.$ref ? resolvePointer<typeof response>(statically, response.$ref) : response;
        expect(Object.keys(resolved.headers ?? {}), `${method} ${route} ${status}`).toContain('x-request-id');
        if (status === '429') expect(Object.keys(resolved.headers ?? {})).toContain('retry-after');
        if (Number(status) >= 400 && route !== '/readyz') {
          expect(resolved.content?.['application/json']?.schema, `${method} ${route} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
        }
      }
      if (!['/healthz', '/readyz'].includes(route)) expect(Object.keys(operation.responses), `${method} ${route}`).toContain('500');
    }
  });

  it('refuses U+0000 in every string a request can carry, in its schema', () => {
    const strings = requestStrings(statically);
    expect(strings.length).toBeGreaterThan(100);
    for (const { where, schema } of strings) {
      if (schema.format === 'date-time') continue; // its grammar has no room for one
      expect(schema.pattern, `${where} states no pattern`).toBeDefined();
      const pattern = new RegExp(schema.pattern!, 'u');
      for (const sample of fc.sample(fc.stringMatching(pattern), { numRuns: 5, seed: SEED })) {
        for (const at of [0, sample.length]) expect(pattern.test(sample.slice(0, at) + '\u0000' + sample.slice(at)), `${where}: ${schema.pattern}`).toBe(false);
      }
    }
  });

  describe('states what the independent fuzzer found missing', () => {
    const body = (route: string, method = 'post') => {
      const schema = statically.paths[route][method].requestBody!.content['application/json'].schema;
      return (schema.$ref ? resolvePointer<Schema>(statically, schema.$ref) : schema) as Schema;
    };
    const param = (route: string, name: string) => statically.paths[route].get.parameters!.find((p) => p.name === name)!.schema;
    const matches = (schema: Schema, value: string) => new RegExp(schema.pattern!, 'u').test(value) && [...value].length <= (schema.maxLength ?? Infinity);
    const loops = '/api/v1/ext/orgs/{org}/loops';

    it('agent_slug xor custom_agent_slug', () => {
      expect(body(loops).not).toEqual({ required: ['agent_slug', 'custom_agent_slug'] });
      expect(body(`${loops}/{slug}`, 'put').not).toMatchObject({ required: ['agent_slug', 'custom_agent_slug'] });
    });

    it('each label of the labels filter at most 50 characters, at most 20 of them', () => {
      const labels = param('/api/v1/ext/orgs/{org}/tickets', 'labels');
      expect(matches(labels, Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(50, 'x')).join(','))).toBe(true);
      expect(matches(labels, ' a , b ,,')).toBe(true);
      expect(matches(labels, `ok,${'x'.repeat(51)}`)).toBe(false);
      expect(matches(labels, Array.from({ length: 21 }, (_, i) => `l${i}`).join(','))).toBe(false);
    });

    it('five-field cron and IANA zone names', () => {
      const { cron_expression: cron, cron_timezone: zone } = body(loops).properties!;
      for (const good of ['0 9 * * MON-FRI', '*/15 * * * *', '0 0 L * *']) expect(matches(cron, good), good).toBe(true);
      for (const bad of ['0 * * * * *', '* * * *', '@hourly', '0 9 * * MON; rm']) expect(matches(cron, bad), bad).toBe(false);
      for (const good of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5']) expect(matches(zone, good), good).toBe(true);
      for (const bad of ['+01:00', 'Europe/', '/Berlin', 'UTC+1 ']) expect(matches(zone, bad), bad).toBe(false);
      expect(zone.description).toMatch(/IANA/);
    });

    it('the branches token: one of access_token and X-Git-Access-Token, said where JSON Schema cannot say it', () => {
      const branches = statically.paths['/api/v1/ext/orgs/{org}/repositories/{id}/branches'].get;
      expect(branches.description).toMatch(/One of the query parameter `access_token` and the header `X-Git-Access-Token` is required/);
      expect((branches.parameters ?? []).filter((p) => ['access_token', 'x-git-access-token'].includes(p.name)).map((p) => p.in)).toEqual(['query', 'header']);
    });

    it('no body whose bounded fields, at 6 bytes a character, exceed the 1 MiB body limit (the channel document)', () => {
      const worstBytes = (input: Schema): number => {
        const schema = input.$ref ? resolvePointer<Schema>(statically, input.$ref) : input;
        const types = Array.isArray(schema.type) ? schema.type : [schema.type];
        if (schema.enum) return Math.max(...schema.enum.map((v) => JSON.stringify(v).length));
        if (types.includes('string')) return 2 + 6 * (schema.maxLength ?? 0);
        if (types.includes('array')) return 2 + (schema.maxItems ?? 0) * (worstBytes(schema.items ?? {}) + 1);
        if (types.includes('object')) return 2 + Object.entries(schema.properties ?? {}).reduce((sum, [name, p]) => sum + name.length + 4 + worstBytes(p), 0);
        return 24; // numbers, booleans, null
      };
      for (const { method, path: route, operation } of operationsOf(statically)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (schema) expect(worstBytes(schema), `${method} ${route}`).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
      }
      expect(body('/api/v1/ext/orgs/{org}/channels').properties!.document.maxLength).toBe(MAX_DOCUMENT);
    });

    it('closed sets as enums: execution_mode, sandbox_strategy, concurrency_policy, ticket type', () => {
      const { schemas } = statically.components;
      for (const name of ['execution_mode', 'sandbox_strategy', 'concurrency_policy']) expect(schemas.Loop.properties![name].enum, name).toBeDefined();
      for (const record of ['Ticket', 'TicketListItem', 'BoardTicket']) expect(schemas[record].properties!.type.enum, record).toEqual([...TICKET_TYPES]);
      expect(body('/api/v1/ext/orgs/{org}/tickets').properties!.type.enum).toEqual([...TICKET_TYPES]);
    });
  });

  it('describes the loop.run.finished callback as a webhook', () => {
    const post = statically.webhooks?.['loop.run.finished']?.post;
    expect(post?.requestBody?.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LoopRunFinishedEvent' });
    expect((post?.parameters ?? []).map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  });
});

describe.each(DATABASES)('every operation of the served OpenAPI document, fuzzed (%s)', (kind) => {
  let t: TestApp;
  let document: OpenApiDocument;
  let validator: SchemaValidator;
  let fixtures: Fixtures;
  let scratch: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-conformance-'));
    const served = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    document = served.json() as OpenApiDocument;
    expect(document).toEqual(statically);
    validator = new SchemaValidator(document);
    fixtures = await createFixtures(t, scratch);
  });
  afterAll(async () => {
    await t?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('sends loop.run.finished callbacks that match the webhook the document declares', async () => {
    const { loop } = (await t.request({ method: 'POST', url: t.path('/loops'), payload: { name: 'called back', agent_slug: 'shell', prompt_template: 'true', callback_url: 'https://example.com/hook' } })).json();
    const { run } = (await t.request({ method: 'POST', url: t.path(`/loops/${loop.slug}/trigger`) })).json();
    expect((await t.request({ method: 'POST', url: t.path(`/loops/${loop.slug}/runs/${run.id}/cancel`) })).statusCode).toBe(200);
    const deliveries = await t.store.db.selectFrom('webhook_deliveries').select('payload').execute();
    expect(deliveries.length).toBeGreaterThan(0);
    const schema = document.webhooks!['loop.run.finished'].post.requestBody!.content['application/json'].schema;
    for (const { payload } of deliveries) expect(validator.check(schema, JSON.parse(payload))).toBeNull();
  });

  it.each(ORDERED.map((walked) => [`${walked.method.toUpperCase()} ${walked.path}`, walked] as const))('%s', async (_name, walked) => {
    await refreshTargets(t, fixtures, baseId(walked.operation.operationId));
    const valid = validRequest(document, walked, fixtures);
    // An event stream accepted answers for as long as it is read: only its refusals are checked here.
    const streams = Object.values(walked.operation.responses).some((r) => 'text/event-stream' in (resolveResponse(document, r).content ?? {}));
    let accepted = streams ? 1 : 0;
    const refusals: string[] = [];
    const seed = SEED + [...walked.operation.operationId].reduce((sum, c) => sum + c.charCodeAt(0), 0);
    await fc.assert(
      fc.asyncProperty(valid, async (request) => {
        if (streams) return;
        const res = await send(t, walked, request);
        const what = JSON.stringify(request).slice(0, 300);
        expectDeclared(document, validator, walked, res, `valid ${what}`);
        expectAccepted(walked, res, what);
        if (process.env.FUZZ_STATS) console.log('VALID', walked.operation.operationId, res.statusCode);
        if (res.statusCode < 300) accepted++;
        else refusals.push(`${res.statusCode} ${res.body.slice(0, 200)}`);
      }),
      { numRuns: RUNS, seed },
    );
    // A credential rotation needs a runner connected over its link, which the fuzzer's runners never
    // are: every valid input is refused with 409 RUNNER_UNAVAILABLE (test/api/admin-runners.test.ts
    // and test/e2e/runner-lifecycle.test.ts rotate a connected runner's credential).
    if (baseId(walked.operation.operationId) === 'adminRotateRunnerCredential') {
      for (const refusal of refusals) expect(refusal).toMatch(/^(409 .*RUNNER_UNAVAILABLE|404 )/);
    } else {
      expect(accepted, `no valid input of ${walked.operation.operationId} was accepted:\n${refusals.join('\n')}`).toBeGreaterThan(0);
    }

    const bodySchema = walked.operation.requestBody?.content['application/json']?.schema;
    const ctx: SchemaContext = { resolve: (ref) => resolvePointer<Schema>(document, ref) };
    const sample = fc.sample(valid, { numRuns: 1, seed })[0];
    if (violations(walked.operation.parameters ?? [], bodySchema, ctx, sample).length === 0) return; // nothing to break (the health probes)
    const broken = valid.chain((request) => {
      const ways = violations(walked.operation.parameters ?? [], bodySchema, ctx, request);
      return fc.constantFrom(...ways).map((way) => ({ what: way.what, request: way.apply(request) }));
    });
    await fc.assert(
      fc.asyncProperty(broken, async ({ what, request }) => {
        const res = await send(t, walked, request);
        if (process.env.FUZZ_STATS) console.log('INVALID', walked.operation.operationId, what, res.statusCode);
        expectDeclared(document, validator, walked, res, `invalid (${what})`);
        expect(res.statusCode, `${walked.operation.operationId} accepted ${what}: ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
        expectError(res);
      }),
      { numRuns: RUNS * 2, seed },
    );

    if (walked.operation.security?.length !== 0) {
      const res = await send(t, walked, sample, false);
      expectDeclared(document, validator, walked, res, 'without credentials');
      expectError(res, 401, 'AUTH_REQUIRED');
    }
  });
});
