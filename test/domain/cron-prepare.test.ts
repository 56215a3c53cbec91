/**
 * Runs of a cron slot prepared ahead (src/domain/loops/cron.ts `preparePass`, docs/decisions.md
 * "Loops and runs"), with the domain's clock driven by the test: within the lead, every loop whose
 * policy would start a run gets its run for the slot once (also with two passes side by side, as
 * two replicas), its pod created with the slot, the runner told the time left; a `skip` loop whose
 * run is still active is left to the slot; a PUT before the slot withdraws the prepared run and the
 * slot is prepared again; a manual trigger the prepared run would skip withdraws it and is decided
 * first, the slot at the slot; a lead of 0 prepares nothing. A prepared pod's `started_at` is when
 * the runner's report arrived.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainContext } from '../../src/domain/context.ts';
import { fireDueSlots } from '../../src/domain/loops/cron.ts';
import { createLoop, manualTrigger, updateLoop } from '../../src/domain/loops/service.ts';
import type { PodConfig } from '../../src/domain/pods/model.ts';
import { podSpec } from '../../src/domain/pods/spec.ts';
import { podStarted } from '../../src/domain/pods/lifecycle.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import type { DatabaseKind } from '../../src/store/db.ts';
import { insertOrg } from '../../src/store/orgs.ts';
import { findPodByKey } from '../../src/store/pods.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { minutelyShellLoop } from '../helpers/loops.ts';
import { insertRunner } from '../helpers/runners.ts';

const CREATED = Date.parse('2026-03-01T12:00:10.000Z');
const SLOT = Date.parse('2026-03-01T12:01:00.000Z');
const LOOPS = 5;
const LEAD = 15_000;

describe.each(DATABASES)('cron runs prepared ahead on %s', (kind: DatabaseKind) => {
  let ctx: DomainContext;
  let org: OrgRow;
  let clock: number;
  let runnerId: number;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const created = await createTestStore(kind);
    cleanup = created.cleanup;
    clock = CREATED;
    ctx = { store: created.store, now: () => clock, secrets: new SecretBox(Buffer.alloc(32, 7)), wakeRunner: async () => {} };
    org = await insertOrg(ctx.store.db, { slug: 'acme', name: 'Acme', ticket_prefix: 'ACME', created_at: CREATED });
    runnerId = await insertRunner(ctx.store, org.id, { agents: JSON.stringify(['shell']), max_pods: 100, created_at: CREATED, updated_at: CREATED }, SLOT);
    for (let i = 0; i < LOOPS; i++) {
      const busy = i === LOOPS - 1;
      await createLoop(ctx, org.id, busy ? minutelyShellLoop('busy', 'Busy') : minutelyShellLoop(`cron-${i}`, `Cron ${i}`));
    }
    // The busy loop's run is still active when the others are prepared.
    await manualTrigger(ctx, org.id, 'busy', undefined);
  });
  afterEach(async () => cleanup());

  const fire = (prepareAheadMs: number) => fireDueSlots(ctx, { now: () => clock, catchupMs: 60_000, batch: 2, prepareAheadMs });
  const runsOfSlot = () =>
    ctx.store.db
      .selectFrom('loop_runs')
      .innerJoin('loops', 'loops.id', 'loop_runs.loop_id')
      .select(['loops.slug', 'loop_runs.id', 'loop_runs.status', 'loop_runs.pod_key', 'loop_runs.started_at', 'loop_runs.created_at'])
      .where('loop_runs.scheduled_at', '=', SLOT)
      .orderBy('loop_runs.id')
      .execute();
  const prepared = Array.from({ length: LOOPS - 1 }, (_, i) => `cron-${i}`);

  it('prepares the slot once within the lead (two passes side by side too), the pod knows its slot; the busy skip loop is decided at the slot', async () => {
    clock = SLOT - LEAD - 1_000;
    expect(await fire(LEAD)).toBe(0);

    clock = SLOT - 10_000;
    const counts = await Promise.all([fire(LEAD), fire(LEAD)]);
    expect(counts[0] + counts[1]).toBe(LOOPS - 1);
    let runs = await runsOfSlot();
    expect(runs.map((r) => r.slug).sort()).toEqual(prepared);
    for (const run of runs) {
      expect(run).toMatchObject({ status: 'pending', started_at: SLOT, created_at: SLOT - 10_000 });
      const pod = (await findPodByKey(ctx.store.db, run.pod_key!))!;
      expect(pod).toMatchObject({ status: 'initializing', started_at: null });
      expect((JSON.parse(pod.config) as PodConfig).start_at).toBe(SLOT);
      clock = SLOT - 4_000;
      expect((await podSpec(ctx, pod, 'acme', 'http://127.0.0.1:1')).start_in_ms).toBe(4_000);
      clock = SLOT + 1;
      expect((await podSpec(ctx, pod, 'acme', 'http://127.0.0.1:1')).start_in_ms).toBeUndefined();
    }
    const loops = await ctx.store.db.selectFrom('loops').select(['slug', 'next_run_at']).orderBy('slug').execute();
    expect(loops).toEqual([{ slug: 'busy', next_run_at: SLOT }, ...prepared.map((slug) => ({ slug, next_run_at: SLOT + 60_000 }))]);

    clock = SLOT - 9_000;
    expect(await fire(LEAD)).toBe(0);
    clock = SLOT;
    expect(await fire(LEAD)).toBe(1);
    runs = await runsOfSlot();
    expect(runs).toHaveLength(LOOPS);
    expect(runs.find((r) => r.slug === 'busy')).toMatchObject({ status: 'skipped', created_at: SLOT });

    // Its agent let go at the slot: started_at is when the runner's report arrived, not when the
    // server came round to applying it (docs/decisions.md "Runners and pods": started_at).
    const first = runs.find((r) => r.slug === 'cron-0')!;
    clock = SLOT + 900;
    await podStarted(ctx, runnerId, first.pod_key!, SLOT + 5);
    expect(await findPodByKey(ctx.store.db, first.pod_key!)).toMatchObject({ status: 'running', started_at: SLOT + 5 });
  });

  it('a PUT before the slot withdraws the prepared run (its pod stopped, its slot cleared) and the slot is prepared again', async () => {
    clock = SLOT - 10_000;
    await fire(LEAD);
    const first = (await runsOfSlot()).find((r) => r.slug === 'cron-0')!;
    clock = SLOT - 8_000;
    await updateLoop(ctx, org.id, 'cron-0', { prompt_template: 'echo changed' });
    const withdrawn = await ctx.store.db.selectFrom('loop_runs').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(withdrawn).toMatchObject({ status: 'cancelled', scheduled_at: null });
    expect(withdrawn.error_message).toMatch(/^withdrawn before its slot \(2026-03-01T12:01:00.000Z\): the loop was changed/);
    expect((await findPodByKey(ctx.store.db, first.pod_key!))!.status).toBe('terminated');

    clock = SLOT - 7_000;
    expect(await fire(LEAD)).toBe(1);
    const again = (await runsOfSlot()).find((r) => r.slug === 'cron-0')!;
    expect(again.id).not.toBe(first.id);
    expect((await findPodByKey(ctx.store.db, again.pod_key!))!.prompt).toBe('echo changed');
  });

  it('a manual trigger that the prepared run would skip goes first: the prepared run gives way, the slot is decided at the slot', async () => {
    clock = SLOT - 10_000;
    await fire(LEAD);
    const first = (await runsOfSlot()).find((r) => r.slug === 'cron-0')!;
    clock = SLOT - 8_000;
    const manual = await manualTrigger(ctx, org.id, 'cron-0', undefined);
    expect(manual).toMatchObject({ status: 'pending', trigger_type: 'manual' });
    expect(manual.pod_key).not.toBeNull();
    const withdrawn = await ctx.store.db.selectFrom('loop_runs').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(withdrawn).toMatchObject({ status: 'cancelled', scheduled_at: null });
    expect(withdrawn.error_message).toMatch(/^withdrawn before its slot \(2026-03-01T12:01:00.000Z\): a run of the loop was triggered by hand/);
    expect((await findPodByKey(ctx.store.db, first.pod_key!))!.status).toBe('terminated');
    const loop = () => ctx.store.db.selectFrom('loops').select('next_run_at').where('slug', '=', 'cron-0').executeTakeFirstOrThrow();
    expect((await loop()).next_run_at).toBe(SLOT);

    // Not prepared again (the manual run holds the one slot); at the slot it is skipped, as without the lead.
    clock = SLOT - 7_000;
    await fire(LEAD);
    expect((await runsOfSlot()).find((r) => r.slug === 'cron-0')).toBeUndefined();
    clock = SLOT;
    await fire(LEAD);
    expect((await runsOfSlot()).find((r) => r.slug === 'cron-0')).toMatchObject({ status: 'skipped', created_at: SLOT });
    expect((await loop()).next_run_at).toBe(SLOT + 60_000);
  });

  it('a manual trigger with a slot free beside the prepared run leaves it prepared', async () => {
    await updateLoop(ctx, org.id, 'cron-1', { max_concurrent_runs: 2 });
    clock = SLOT - 10_000;
    await fire(LEAD);
    const first = (await runsOfSlot()).find((r) => r.slug === 'cron-1')!;
    clock = SLOT - 8_000;
    expect(await manualTrigger(ctx, org.id, 'cron-1', undefined)).toMatchObject({ status: 'pending', trigger_type: 'manual' });
    expect((await runsOfSlot()).find((r) => r.slug === 'cron-1')).toMatchObject({ id: first.id, status: 'pending' });
    expect((await ctx.store.db.selectFrom('loops').select('next_run_at').where('slug', '=', 'cron-1').executeTakeFirstOrThrow()).next_run_at).toBe(SLOT + 60_000);
  });

  it('a run recorded at its slot is never taken for a prepared one, whatever clock reads it: its pod starts at once, a PUT leaves it be', async () => {
    // The cron clock at the slot, the context's clock a minute behind (a test's cron clock, a lagging replica).
    clock = SLOT - 60_000;
    await fireDueSlots(ctx, { now: () => SLOT + 500, catchupMs: 60_000, batch: 2, prepareAheadMs: LEAD });
    const run = (await runsOfSlot()).find((r) => r.slug === 'cron-0')!;
    const pod = (await findPodByKey(ctx.store.db, run.pod_key!))!;
    expect((JSON.parse(pod.config) as PodConfig).start_at).toBeUndefined();
    expect((await podSpec(ctx, pod, 'acme', 'http://127.0.0.1:1')).start_in_ms).toBeUndefined();
    await updateLoop(ctx, org.id, 'cron-0', { prompt_template: 'echo changed' });
    expect((await runsOfSlot()).find((r) => r.slug === 'cron-0')).toMatchObject({ id: run.id, status: 'pending' });
  });

  it('a lead of 0 prepares nothing: the slot is fired at the slot', async () => {
    clock = SLOT - 10_000;
    expect(await fire(0)).toBe(0);
    expect(await runsOfSlot()).toEqual([]);
    clock = SLOT;
    expect(await fire(0)).toBe(LOOPS);
  });
});
