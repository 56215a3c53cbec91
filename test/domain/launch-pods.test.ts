/**
 * Placing pods (src/domain/pods/launch.ts, docs/api.md "Pods") on every database: a burst of
 * requests is placed against one reading of the runners' loads, each request gets its pod or the
 * error that refused it (the others are placed all the same), loops' preferred runner, runners
 * that are offline or silent get nothing, and each placed pod's runner is woken once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainContext } from '../../src/domain/context.ts';
import type { AgentfileLayer } from '../../src/domain/pods/agentfile.ts';
import { launchPod, launchPods, type LaunchRequest, type PodInput } from '../../src/domain/pods/launch.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { AppError } from '../../src/errors.ts';
import { insertCustomAgent } from '../../src/store/custom-agents.ts';
import type { DatabaseKind } from '../../src/store/db.ts';
import { insertOrg } from '../../src/store/orgs.ts';
import { findPodByKey } from '../../src/store/pods.ts';
import { insertRunner } from '../../src/store/runners.ts';
import type { PodRow, RunnerRow, RunnersTable } from '../../src/store/schema-runners.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const LAYER: AgentfileLayer = { prompt: 'echo hi', mode: 'direct', config: {}, repo: null, branch: null, credentials: [], env: {}, allow: [] };

const request = (input: Partial<PodInput> = {}, extras?: LaunchRequest['extras']): LaunchRequest => ({
  input: { agent_slug: 'shell', ...input },
  layer: LAYER,
  extras,
});

const isPod = (result: PodRow | AppError): result is PodRow => !(result instanceof AppError);

describe.each(DATABASES)('launchPods on %s', (kind: DatabaseKind) => {
  let ctx: DomainContext;
  let org: OrgRow;
  let woken: { runnerId: number; pod: PodRow | undefined }[];
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    cleanup = created.cleanup;
    woken = [];
    ctx = {
      store: created.store,
      now: () => NOW,
      secrets: new SecretBox(Buffer.alloc(32, 5)),
      wakeRunner: async (runnerId, pod) => {
        woken.push({ runnerId, pod });
      },
    };
    org = await insertOrg(ctx.store.db, { slug: 'acme', name: 'Acme', ticket_prefix: 'ACME', created_at: NOW });
  });
  afterEach(async () => cleanup());

  let runnerNumber = 0;
  const runner = (maxPods: number, extra: Partial<RunnersTable> = {}): Promise<RunnerRow> => {
    const name = `runner-${++runnerNumber}`;
    return insertRunner(ctx.store.db, {
      org_id: org.id,
      name,
      credential_hash: `hash-${name}`,
      status: 'online',
      version: '0.1.0',
      os: 'linux',
      arch: 'x64',
      labels: '[]',
      agents: JSON.stringify(['shell']),
      sandbox: null,
      max_pods: maxPods,
      connection_id: null,
      last_heartbeat_at: NOW,
      created_at: NOW,
      updated_at: NOW,
      ...extra,
    });
  };

  const storedPods = async () =>
    (await ctx.store.db.selectFrom('pods').select(['key', 'runner_id']).where('org_id', '=', org.id).orderBy('id').execute()).map((p) => ({
      key: p.key,
      runner_id: p.runner_id === null ? null : Number(p.runner_id),
    }));

  it('places a burst against one reading of the loads: fewest pods first, up to max_pods, then queued without a runner', async () => {
    const a = await runner(2);
    const b = await runner(1);
    const results = await launchPods(ctx, org, [request(), request(), request(), request()]);

    const pods = results.filter(isPod);
    expect(pods.map((pod) => pod.runner_id)).toEqual([a.id, b.id, a.id, null]);
    expect(pods.map((pod) => pod.status)).toEqual(['initializing', 'initializing', 'initializing', 'queued']);
    for (const pod of pods) expect(pod).toMatchObject({ org_id: org.id, agent_slug: 'shell', prompt: 'echo hi' });
    expect(await storedPods()).toEqual(pods.map((pod) => ({ key: pod.key, runner_id: pod.runner_id })));

    // The runners are full now: a later request waits too, behind the first.
    const [later] = await launchPods(ctx, org, [request()]);
    expect(later).toMatchObject({ status: 'queued', runner_id: null });
    expect(await storedPods()).toHaveLength(5);
  });

  it('wakes the runner of each placed pod once, with that pod as stored, and no runner for a refused one', async () => {
    const a = await runner(1);
    const b = await runner(1);
    const results = await launchPods(ctx, org, [request(), request({ agent_slug: 'no-such-agent' }), request(), request()]);
    const placed = results.filter(isPod).filter((pod) => pod.runner_id !== null);
    expect(placed.map((pod) => pod.runner_id)).toEqual([a.id, b.id]);
    expect(results[3]).toMatchObject({ status: 'queued' });
    expect(woken).toEqual(placed.map((pod) => ({ runnerId: pod.runner_id, pod })));
    for (const { pod } of woken) expect(pod).toEqual(await findPodByKey(ctx.store.db, pod!.key));
  });

  it('an explicit runner_id that names no runner of the org refuses that request only (VALIDATION_FAILED)', async () => {
    const a = await runner(2);
    const [unknown, first, second] = await launchPods(ctx, org, [request({ runner_id: a.id + 1000 }), request(), request({ runner_id: a.id })]);
    expect(unknown).toBeInstanceOf(AppError);
    expect(unknown).toMatchObject({ code: 'VALIDATION_FAILED', extra: { details: [expect.objectContaining({ field: '/runner_id' })] } });
    expect(first).toMatchObject({ runner_id: a.id });
    expect(second).toMatchObject({ runner_id: a.id });
    expect(await storedPods()).toHaveLength(2);
    expect(woken).toHaveLength(2);
  });

  it('an agent slug that is neither built in nor a custom agent of the org refuses that request only; a custom one is placed', async () => {
    const a = await runner(3);
    await insertCustomAgent(ctx.store.db, { org_id: org.id, slug: 'my-agent', name: 'Mine', command: 'my-agent', args: '[]', prompt_position: 'last', created_at: NOW });
    const [custom, unknown, builtin] = await launchPods(ctx, org, [request({ agent_slug: 'my-agent' }), request({ agent_slug: 'other-agent' }), request()]);
    expect(custom).toMatchObject({ runner_id: a.id, agent_slug: 'my-agent' });
    expect(unknown).toBeInstanceOf(AppError);
    expect(unknown).toMatchObject({ code: 'VALIDATION_FAILED', extra: { details: [expect.objectContaining({ field: '/agent_slug' })] } });
    expect(builtin).toMatchObject({ runner_id: a.id, agent_slug: 'shell' });
    expect(await storedPods()).toHaveLength(2);
  });

  it('uses extras.preferRunnerId when that runner is available, and any runner when it is not', async () => {
    const a = await runner(2);
    const b = await runner(2);
    const offline = await runner(2, { status: 'offline' });
    const results = await launchPods(ctx, org, [
      request({}, { preferRunnerId: b.id }),
      request({}, { preferRunnerId: b.id }),
      request({}, { preferRunnerId: b.id }), // b is full now
      request({}, { preferRunnerId: offline.id }),
    ]);
    expect(results.map((pod) => (isPod(pod) ? pod.runner_id : pod.code))).toEqual([b.id, b.id, a.id, a.id]);
  });

  it('a runner that is offline, or whose heartbeat is stale, gets nothing: pods of an agent it has wait in the queue', async () => {
    const stale = await runner(5, { last_heartbeat_at: NOW - 31_000 });
    const offline = await runner(5, { status: 'offline' });
    const silent = await runner(5, { last_heartbeat_at: null });
    const waiting = await launchPods(ctx, org, [request(), request()]);
    expect(waiting.map((r) => (isPod(r) ? [r.status, r.runner_id] : r.code))).toEqual([
      ['queued', null],
      ['queued', null],
    ]);
    expect(woken).toEqual([]);

    // A runner comes: the next placement gives the queue its slots first, oldest first.
    const fresh = await runner(5);
    const results = await launchPods(ctx, org, [
      request(),
      request({ runner_id: stale.id }),
      request({ runner_id: offline.id }),
      request({ runner_id: silent.id }),
    ]);
    expect(results[0]).toMatchObject({ runner_id: fresh.id, status: 'initializing' });
    expect(results[1]).toMatchObject({ code: 'RUNNER_UNAVAILABLE', message: expect.stringMatching(/heartbeat is stale/) });
    expect(results[2]).toMatchObject({ code: 'RUNNER_UNAVAILABLE', message: expect.stringMatching(/offline/) });
    expect(results[3]).toMatchObject({ code: 'RUNNER_UNAVAILABLE', message: expect.stringMatching(/heartbeat is stale/) });
    const stored = await storedPods();
    expect(stored.map((pod) => pod.runner_id)).toEqual([fresh.id, fresh.id, fresh.id]);
    // Woken: the two queued pods first (in their order), then the new one.
    expect(woken.map((w) => w.pod!.key)).toEqual([...waiting.filter(isPod).map((pod) => pod.key), (results[0] as PodRow).key]);
  });

  it('launchPod (one pod) returns the pod, and throws the AppError that refused it (503: no runner has the agent)', async () => {
    const a = await runner(1);
    const pod = await launchPod(ctx, org, request());
    expect(pod).toMatchObject({ runner_id: a.id, status: 'initializing' });
    const refused = await launchPod(ctx, org, request({ agent_slug: 'claude-code' })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'NO_AVAILABLE_RUNNER', status: 503 });
    expect(await storedPods()).toEqual([{ key: pod.key, runner_id: a.id }]);
  });
});
