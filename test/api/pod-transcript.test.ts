/**
 * GET /pods/:key/transcript (docs/transcripts.md "The API"; docs/transcripts.md): the pod's kept output
 * read by its agent's parser, on both databases. The output is what the real CLIs printed
 * (test/fixtures/transcripts/), stored as a runner would store it; pods are rows (no runner process
 * runs here). Happy paths, paging with `after`, a live pod whose output grows, the kept tail of a
 * long output, the `format` override, bad parameters, and who may read it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTranscript, type TranscriptEntry } from '../../src/agents/transcript/index.ts';
import type { paths } from '../../src/client/index.ts';
import { SCOPES } from '../../src/protocol/scopes.ts';
import { appendOutputChunk, OUTPUT_KEEP_BYTES } from '../../src/store/pod-output.ts';
import type { PodStatus } from '../../src/store/schema-runners.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DATABASES } from '../helpers/databases.ts';
import { expectError } from '../helpers/errors.ts';
import { insertPodRow } from '../helpers/pods.ts';
import { insertRunner } from '../helpers/runners.ts';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', name), 'utf8');

type TranscriptBody = paths['/api/v1/ext/orgs/{org}/pods/{key}/transcript']['get']['responses'][200]['content']['application/json'];

describe.each(DATABASES)('GET /pods/:key/transcript on %s', (kind) => {
  let t: TestApp;
  let runnerId: number;
  let globex: OrgRow;

  beforeAll(async () => {
    t = await startTestApp(kind);
    runnerId = await insertRunner(t.store, t.org.id);
    globex = await t.createOrg('globex');
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A pod of this agent whose output holds `output` (written at `offset`, as a runner's chunks are). */
  async function pod(agent: string, output: string, status: PodStatus = 'completed', options: { org?: OrgRow; offset?: number } = {}) {
    const org = options.org ?? t.org;
    const runner = org === t.org ? runnerId : await insertRunner(t.store, org.id);
    const row = await insertPodRow(t.store, org.id, runner, { agent_slug: agent, status });
    if (output !== '') await appendOutputChunk(t.store.db, row.id, options.offset ?? 0, output);
    return row;
  }
  const setStatus = (id: number, status: PodStatus) => t.store.db.updateTable('pods').set({ status }).where('id', '=', id).execute();

  async function transcript(key: string, query = '', apiKey?: string): Promise<TranscriptBody> {
    const res = await t.request({ method: 'GET', url: t.path(`/pods/${key}/transcript${query}`), key: apiKey });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as TranscriptBody;
  }

  it.each(['claude-code', 'codex', 'gemini-cli', 'opencode'])('a finished %s pod: its output read by its agent’s parser, whole', async (agent) => {
    const output = fixture(`${agent}-work.out`);
    const row = await pod(agent, output);
    const body = await transcript(row.key);
    expect(body).toEqual({
      entries: parseTranscript(agent as 'codex', output),
      format: agent,
      last_seq: body.entries.at(-1)!.seq,
      has_more: false,
      earlier: 0,
      limit: 1000,
      complete: true,
      truncated: false,
      total_bytes: Buffer.byteLength(output),
    });
    const call = body.entries.find((e) => e.kind === 'tool_call' && e.tool!.command === 'cat missing.txt')!;
    expect(call.text).toBe('$ cat missing.txt');
    const result = body.entries.find((e) => e.kind === 'tool_result' && e.tool!.call_seq === call.seq)!;
    expect(result.text).toContain('No such file or directory');
    expect(body.entries.filter((e) => e.kind === 'text').map((e) => e.text)).toEqual(['Done: wrote greeting.txt; missing.txt does not exist.']);
    expect(body.entries.some((e) => e.text.startsWith('{"'))).toBe(false);
  });

  it('a shell pod is plain lines; format= reads it as another agent’s output (a script that runs the CLI itself)', async () => {
    const output = fixture('claude-code-error.out');
    const row = await pod('shell', output);
    const plain = await transcript(row.key);
    expect(plain.format).toBe('plain');
    expect(plain.entries.every((e) => e.kind === 'text' && e.tool === null)).toBe(true);
    expect(plain.entries).toHaveLength(output.trim().split('\n').length);
    const read = await transcript(row.key, '?format=claude-code');
    expect(read.format).toBe('claude-code');
    expect(read.entries).toEqual(parseTranscript('claude-code', output));
    expect(read.entries.filter((e) => e.kind === 'error').map((e) => e.text)).toEqual(['API Error: 400 the model stand-in refuses this request (a scripted failure)']);
    // A custom agent's output is plain too.
    expect((await transcript((await pod('my-wrapper', 'one\ntwo\n')).key)).entries.map((e) => e.text)).toEqual(['one', 'two']);
  });

  it('pages: limit and after=last_seq give every entry once, in order; the limit is clamped to 5000', async () => {
    const output = fixture('opencode-work.out');
    const row = await pod('opencode', output);
    const whole = (await transcript(row.key)).entries;
    const seen: TranscriptEntry[] = [];
    let after = '';
    for (let pages = 1; ; pages++) {
      const page = await transcript(row.key, `?limit=2${after}`);
      seen.push(...page.entries);
      expect(page.limit).toBe(2);
      if (!page.has_more) {
        expect(pages).toBe(Math.ceil(whole.length / 2));
        break;
      }
      after = `&after=${page.last_seq}`;
    }
    expect(seen).toEqual(whole);
    const past = await transcript(row.key, `?after=${whole.at(-1)!.seq}`);
    expect(past).toMatchObject({ entries: [], last_seq: whole.at(-1)!.seq, has_more: false });
    expect((await transcript(row.key, '?limit=99999')).limit).toBe(5000);
    expect((await transcript((await pod('codex', '')).key)).entries).toEqual([]);
  });

  it('pages from the end: newest=true gives the newest entries and counts the earlier ones; before=<first seq> reads back to the start', async () => {
    const output = fixture('opencode-work.out');
    const row = await pod('opencode', output);
    const whole = (await transcript(row.key)).entries;
    expect(whole.length).toBeGreaterThan(4);
    const newest = await transcript(row.key, '?limit=3&newest=true');
    expect(newest).toMatchObject({ entries: whole.slice(-3), earlier: whole.length - 3, has_more: false, last_seq: whole.at(-1)!.seq });
    const read: TranscriptEntry[] = [...newest.entries];
    let earlier = newest.earlier;
    while (earlier > 0) {
      const page = await transcript(row.key, `?limit=2&newest=true&before=${read[0].seq}`);
      expect(page.earlier).toBe(Math.max(0, earlier - 2));
      read.unshift(...page.entries);
      earlier = page.earlier;
    }
    expect(read).toEqual(whole);
    // Oldest first (the default) counts nothing earlier; before alone pages from the start.
    expect(await transcript(row.key, `?limit=2&before=${whole[3].seq}`)).toMatchObject({ entries: whole.slice(0, 2), earlier: 0, has_more: true });
    expect((await transcript(row.key, `?newest=true&after=${whole.at(-2)!.seq}`)).entries).toEqual(whole.slice(-1));
  });

  it('live: while the pod runs, only what is final (no half line, no text still streaming); what follows comes with after=last_seq', async () => {
    const output = fixture('gemini-cli-work.out');
    // Up to the middle of the line after the assistant's streamed text (its `result` line).
    const cut = output.indexOf('{"type":"result"') + 20;
    const row = await pod('gemini-cli', output.slice(0, cut), 'running');
    const live = await transcript(row.key);
    expect(live.complete).toBe(false);
    const whole = parseTranscript('gemini-cli', output);
    const text = whole.find((e) => e.kind === 'text')!;
    expect(live.entries).toEqual(whole.filter((e) => e.seq < text.seq));
    await appendOutputChunk(t.store.db, row.id, Buffer.byteLength(output.slice(0, cut)), output.slice(cut));
    await setStatus(row.id, 'completed');
    const rest = await transcript(row.key, `?after=${live.last_seq}`);
    expect(rest.complete).toBe(true);
    expect([...live.entries, ...rest.entries]).toEqual(whole);
    expect(rest.entries.map((e) => e.kind)).toEqual(['text', 'status']);
  });

  it('a long output: only its kept tail is read, the piece of a line it starts with is dropped, seqs stay byte offsets', async () => {
    const line = (n: number) => `line ${n}\n`;
    const tail = `ece of an earlier line\n${line(1)}${line(2)}`;
    const offset = 3 * OUTPUT_KEEP_BYTES;
    const row = await pod('shell', tail, 'completed', { offset });
    const body = await transcript(row.key);
    expect(body).toMatchObject({ truncated: true, total_bytes: offset + Buffer.byteLength(tail) });
    expect(body.entries.map((e) => [e.seq, e.text])).toEqual([
      [offset + tail.indexOf('line 1'), 'line 1'],
      [offset + tail.indexOf('line 2'), 'line 2'],
    ]);
  });

  it('bad parameters → 400 naming the parameter', async () => {
    const row = await pod('shell', 'x\n');
    for (const [query, field] of [
      ['?after=-1', 'after'],
      ['?after=abc', 'after'],
      ['?after=1.5', 'after'],
      ['?limit=0', 'limit'],
      ['?limit=-3', 'limit'],
      ['?limit=many', 'limit'],
      ['?before=-1', 'before'],
      ['?newest=yes', 'newest'],
      ['?format=markdown', 'format'],
      ['?format=', 'format'],
      ['?offset=3', 'offset'],
    ]) {
      const body = expectError(await t.request({ method: 'GET', url: t.path(`/pods/${row.key}/transcript${query}`) }), 400, 'VALIDATION_FAILED');
      expect(body.details!.map((d) => d.field.replace(/^\//, '')), `${query}: ${JSON.stringify(body)}`).toContain(field);
    }
    expectError(await t.request({ method: 'GET', url: t.path(`/pods/${'x'.repeat(65)}/transcript`) }), 400, 'VALIDATION_FAILED');
  });

  it('who may read it: pods:read (or pods:write); 401 without a key; 403 without the scope; another organization’s pod or slug → 404', async () => {
    const row = await pod('claude-code', fixture('claude-code-work.out'));
    expect((await transcript(row.key, '', (await t.issueKey(['pods:read'])).key)).entries.length).toBeGreaterThan(0);
    expect((await transcript(row.key, '', (await t.issueKey(['pods:write'])).key)).entries.length).toBeGreaterThan(0);
    expectError(await t.request({ method: 'GET', url: t.path(`/pods/${row.key}/transcript`), key: null }), 401, 'AUTH_REQUIRED');
    const others = (await t.issueKey(SCOPES.filter((s) => !s.startsWith('pods:')))).key;
    const refused = expectError(await t.request({ method: 'GET', url: t.path(`/pods/${row.key}/transcript`), key: others }), 403, 'INSUFFICIENT_SCOPE');
    expect(refused.required_scopes).toEqual(['pods:read']);
    const globexPod = await pod('claude-code', fixture('claude-code-work.out'), 'completed', { org: globex });
    expectError(await t.request({ method: 'GET', url: t.path(`/pods/${globexPod.key}/transcript`) }), 404, 'NOT_FOUND');
    const globexKey = (await t.issueKey(SCOPES, { org: globex })).key;
    expectError(await t.request({ method: 'GET', url: t.path(`/pods/${row.key}/transcript`), key: globexKey }), 404, 'NOT_FOUND');
    expectError(await t.request({ method: 'GET', url: t.path(`/pods/${row.key}/transcript`, 'globex') }), 404, 'NOT_FOUND');
    expectError(await t.request({ method: 'GET', url: t.path('/pods/p-doesnotexist00/transcript') }), 404, 'NOT_FOUND');
  });
});
