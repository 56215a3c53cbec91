/**
 * A cron burst (src/domain/loops/cron.ts `fireDueSlots`, docs/decisions.md "Loops and runs"): the
 * due loops are claimed batch after batch without waiting for the starts of the batches before, so
 * the last runs of a slot are recorded while the first pods are still being handed to runners; every
 * run still gets exactly one pod, and the pass resolves only once every start has settled.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainContext } from '../../src/domain/context.ts';
import { fireDueSlots } from '../../src/domain/loops/cron.ts';
import { createLoop } from '../../src/domain/loops/service.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import type { DatabaseKind } from '../../src/store/db.ts';
import { insertOrg } from '../../src/store/orgs.ts';
import type { OrgRow } from '../../src/store/schema.ts';
import { DATABASES, createTestStore } from '../helpers/databases.ts';
import { minutelyShellLoop } from '../helpers/loops.ts';
import { insertRunner } from '../helpers/runners.ts';

const CREATED = Date.parse('2026-03-01T12:00:10.000Z');
const SLOT = Date.parse('2026-03-01T12:01:00.000Z');
const LOOPS = 7;

describe.each(DATABASES)('cron burst on %s', (kind: DatabaseKind) => {
  let ctx: DomainContext;
  let org: OrgRow;
  let clock: number;
  let cleanup: () => Promise<void>;
  /** Resolves the runner wake-ups held so far, and lets later ones through. */
  let releaseWakes: () => void;
  let woken: string[];

  beforeEach(async () => {
    const created = await createTestStore(kind);
    cleanup = created.cleanup;
    clock = CREATED;
    woken = [];
    let released = false;
    const held: (() => void)[] = [];
    releaseWakes = () => {
      released = true;
      for (const resolve of held.splice(0)) resolve();
    };
    ctx = {
      store: created.store,
      now: () => clock,
      secrets: new SecretBox(Buffer.alloc(32, 7)),
      // Handing pods to the runner takes as long as the test says: the first start of the burst hangs here.
      wakeRunner: async (_runnerId, pod) => {
        if (pod) woken.push(pod.key);
        if (!released) await new Promise<void>((resolve) => held.push(resolve));
      },
    };
    org = await insertOrg(ctx.store.db, { slug: 'acme', name: 'Acme', ticket_prefix: 'ACME', created_at: CREATED });
    await insertRunner(ctx.store, org.id, { agents: JSON.stringify(['shell']), max_pods: 100, created_at: CREATED, updated_at: CREATED }, SLOT);
    for (let i = 0; i < LOOPS; i++) {
      await createLoop(ctx, org.id, minutelyShellLoop(`cron-${i}`, `Cron ${i}`));
    }
  });
  afterEach(async () => {
    releaseWakes();
    await cleanup();
  });

  const runsOfSlot = () =>
    ctx.store.db.selectFrom('loop_runs').select(['loop_id', 'status', 'pod_key', 'scheduled_at']).where('scheduled_at', '=', SLOT).orderBy('loop_id').execute();

  it('records every run of the slot while the first batch is still being started, then gives each run exactly one pod', async () => {
    const due = await ctx.store.db.selectFrom('loops').select('next_run_at').execute();
    expect(due.map((l) => l.next_run_at)).toEqual(Array(LOOPS).fill(SLOT));
    clock = SLOT + 5;

    let settled = false;
    const pass = fireDueSlots(ctx, { now: () => clock, catchupMs: 60_000, batch: 2 }).finally(() => (settled = true));
    // The first batch's pods are placed and their runner is being woken (held): the later batches'
    // claims go on meanwhile. Waiting for the condition, not for a fixed time.
    const deadline = Date.now() + 10_000;
    while ((await runsOfSlot()).length < LOOPS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(woken.length).toBeGreaterThan(0);
    expect((await runsOfSlot()).length).toBe(LOOPS);
    expect(settled).toBe(false); // the pass waits for the starts it set off

    releaseWakes();
    expect(await pass).toBe(LOOPS);
    const runs = await runsOfSlot();
    expect(runs.map((r) => r.status)).toEqual(Array(LOOPS).fill('pending'));
    expect(new Set(runs.map((r) => r.loop_id)).size).toBe(LOOPS);
    expect(runs.every((r) => r.pod_key !== null)).toBe(true);
    const pods = await ctx.store.db.selectFrom('pods').select(['key']).where('org_id', '=', org.id).execute();
    expect(pods.map((p) => p.key).sort()).toEqual(runs.map((r) => r.pod_key!).sort());
    expect([...woken].sort()).toEqual(runs.map((r) => r.pod_key!).sort());
    // Every loop moved on to the next minute: the slot is not fired twice.
    expect(await fireDueSlots(ctx, { now: () => clock, catchupMs: 60_000, batch: 2 })).toBe(0);
  });

  it('a start that fails while later batches are still claimed fails the pass once it ends (not as an unhandled rejection); every run is recorded', async () => {
    clock = SLOT + 5;
    let wakes = 0;
    const failing: DomainContext = {
      ...ctx,
      wakeRunner: async () => {
        if (++wakes === 1) throw new Error('the runner could not be woken');
      },
    };
    await expect(fireDueSlots(failing, { now: () => clock, catchupMs: 60_000, batch: 2 })).rejects.toThrow('the runner could not be woken');
    expect((await runsOfSlot()).length).toBe(LOOPS);
  });
});
