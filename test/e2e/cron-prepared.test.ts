/**
 * Runs of a cron slot prepared ahead (docs/decisions.md "Loops and runs", docs/runners.md "Pods
 * prepared ahead of their slot") with REAL processes on every database: a `drover serve` child
 * process with DROVER_CRON_PREPARE_AHEAD_MS=20000 and a `drover runner` with the default bwrap
 * sandbox. Every loop is due at the same real minute M (cron `* * * * *`; the test starts at least
 * 25 s before it, so nothing is prepared before the loops are set up), and one slot shows:
 * - a prepared run's pod is created before M, its sandbox built (its wrapper waits for the go
 *   signal), and its agent starts at M or later: `started_at` ≥ `scheduled_at`, and the time the
 *   agent prints (`date +%s%3N`, the runner's clock) is ≥ M;
 * - a loop disabled or deleted after its run was prepared: the run is withdrawn, its pod ends
 *   `terminated` without `started_at`, and its agent never printed anything;
 * - a pod terminated while it waits for its slot: its agent never ran, its run is cancelled;
 * - a `skip` loop whose previous run is still active when the others are prepared gets no run
 *   ahead: its slot is decided at M, as without the lead (a `skipped` run created at M or later).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../helpers/databases.ts';
import { ORG, podClient, type PodDetail } from '../helpers/pod-client.ts';
import { commandLine, podProcesses, waitFor, type RunnerProcess } from '../helpers/runner-process.ts';
import { startSandboxFixture, type SandboxFixture } from '../helpers/sandbox-fixture.ts';

const ADMIN_TOKEN = 'drvadm_cron_prepared_admin_token_0123456789abc';
const LOOPS = `${ORG}/loops`;
const LEAD_MS = 20_000;

interface Run {
  id: number;
  status: string;
  pod_key: string | null;
  scheduled_at: string | null;
  error_message: string | null;
  created_at: string;
}

const ms = (iso: string | null) => (iso === null ? NaN : Date.parse(iso));

/** Whether pod `key`'s sandbox is built and its agent waits for the slot: the gate's wrapper (src/runner/slot-gate.ts) runs. */
const waitingForSlot = (key: string): boolean => podProcesses(key).some((pid) => commandLine(pid).startsWith('/bin/sh -c read -r _ <&4'));

describe.each(DATABASES)('cron runs prepared ahead of their slot (%s)', (kind) => {
  let fixture: SandboxFixture;
  let runner: RunnerProcess;
  const c = podClient(
    () => fixture.server.url,
    () => fixture.apiKey,
    ADMIN_TOKEN,
  );

  beforeAll(async () => {
    fixture = await startSandboxFixture({
      kind,
      adminToken: ADMIN_TOKEN,
      name: 'cron-prepared',
      runnerName: 'slot-runner',
      runnerMaxPods: 8,
      // The fixture's; the loops here work in a scratch workspace, not in it.
      repository: { name: 'unused', fullName: 'acme/unused', files: { 'README.md': 'unused\n' } },
      serverEnv: { DROVER_CRON_TICK_MS: '200', DROVER_SWEEP_INTERVAL_MS: '200', DROVER_CRON_PREPARE_AHEAD_MS: String(LEAD_MS) },
    });
    runner = fixture.runner;
  }, 240_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  async function createLoop(slug: string, prompt: string): Promise<void> {
    const body = { name: slug, slug, agent_slug: 'shell', execution_mode: 'direct', prompt_template: prompt, cron_expression: '* * * * *', concurrency_policy: 'skip', max_concurrent_runs: 1, runner_id: runner.runnerId };
    const response = await c.api('POST', LOOPS, body);
    expect(response.status, response.text).toBe(201);
  }

  const runsOf = async (slug: string): Promise<Run[]> => ((await c.api('GET', `${LOOPS}/${slug}/runs`)).body as { runs: Run[] }).runs;
  const runOfSlot = async (slug: string, slot: number) => (await runsOf(slug)).find((r) => ms(r.scheduled_at) === slot);

  it('the pod is ready before the slot, the agent starts at it; disabled, deleted and terminated ones never run; a skip loop is decided at the slot', async () => {
    // At least 25 s before the next minute: the loops are set up before the lead reaches it.
    const toNextMinute = () => 60_000 - (Date.now() % 60_000);
    await waitFor(() => toNextMinute() >= 25_000, { timeout: 40_000, interval: 200, what: '25 s before a minute' });
    const slot = Date.now() + toNextMinute();

    await createLoop('at-slot', 'echo "agent-at $(date +%s%3N)"');
    await createLoop('disabled', 'echo ran-disabled');
    await createLoop('deleted', 'echo ran-deleted');
    await createLoop('terminated', 'echo ran-terminated');
    await createLoop('busy', 'sleep 120');
    const busy = (await c.api('POST', `${LOOPS}/busy/trigger`)).body as { run: Run };
    await waitFor(async () => (await runsOf('busy')).find((r) => r.id === busy.run.id && r.status === 'running'), { timeout: 15_000, what: 'the busy loop running' });
    expect(Date.now()).toBeLessThan(slot - LEAD_MS);

    // Prepared within the lead: each run recorded for the slot, its pod on the runner, waiting.
    const prepared = new Map<string, Run>();
    for (const slug of ['at-slot', 'disabled', 'deleted', 'terminated']) {
      const withPod = async () => {
        const run = await runOfSlot(slug, slot);
        return run?.pod_key ? run : undefined;
      };
      prepared.set(slug, await waitFor(withPod, { timeout: Math.max(0, slot - Date.now()), interval: 200, what: `the run of ${slug} prepared before the slot` }));
    }
    for (const [slug, run] of prepared) await waitFor(() => waitingForSlot(run.pod_key!), { timeout: 15_000, what: `the sandbox of ${slug} built, its agent waiting` });
    expect(Date.now()).toBeLessThan(slot);
    for (const run of prepared.values()) {
      expect(run.status).toBe('pending');
      const pod = await c.getPod(run.pod_key!);
      expect(pod).toMatchObject({ status: 'initializing', started_at: null });
      expect(ms(pod.created_at)).toBeLessThan(slot);
    }
    expect(await runOfSlot('busy', slot)).toBeUndefined();

    expect((await c.api('POST', `${LOOPS}/disabled/disable`)).status).toBe(200);
    expect((await c.api('DELETE', `${LOOPS}/deleted`)).status).toBe(200);
    expect((await c.api('POST', `${ORG}/pods/${prepared.get('terminated')!.pod_key}/terminate`)).status).toBe(200);
    const stopped: PodDetail[] = [];
    for (const slug of ['disabled', 'deleted', 'terminated']) stopped.push(await c.waitStatus(prepared.get(slug)!.pod_key!, ['terminated', 'completed', 'failed'], 15_000));
    expect(Date.now()).toBeLessThan(slot);
    for (const slug of ['disabled', 'deleted', 'terminated']) await waitFor(() => podProcesses(prepared.get(slug)!.pod_key!).length === 0, { timeout: 15_000, what: `the sandbox of ${slug} gone` });
    expect(waitingForSlot(prepared.get('at-slot')!.pod_key!)).toBe(true);

    // The slot: the prepared agent starts, not before it.
    const pod = await c.waitStatus(prepared.get('at-slot')!.pod_key!, ['completed', 'failed'], slot - Date.now() + 30_000);
    expect(pod.status, await c.output(pod.key)).toBe('completed');
    expect(ms(pod.started_at)).toBeGreaterThanOrEqual(slot);
    const printed = Number(/agent-at (\d+)/.exec(await c.output(pod.key))?.[1]);
    expect(printed).toBeGreaterThanOrEqual(slot);
    // The run follows its pod in the transaction after the pod's (docs/api.md "Loops and runs").
    await waitFor(async () => (await runOfSlot('at-slot', slot))?.status === 'completed', { timeout: 10_000, what: 'the run of at-slot completed' });

    for (const [i, slug] of ['disabled', 'deleted', 'terminated'].entries()) {
      expect(stopped[i], slug).toMatchObject({ status: 'terminated', started_at: null });
      expect(await c.output(stopped[i].key)).not.toContain(`ran-${slug}`);
    }
    const withdrawn = (await runsOf('disabled')).find((r) => r.id === prepared.get('disabled')!.id)!;
    expect(withdrawn).toMatchObject({ status: 'cancelled', scheduled_at: null });
    expect(withdrawn.error_message).toMatch(/withdrawn before its slot .*disabled/);
    expect((await runsOf('terminated')).find((r) => r.id === prepared.get('terminated')!.id)).toMatchObject({ status: 'cancelled' });

    // The skip loop's slot is decided at the slot, as without the lead.
    const skipped = await waitFor(() => runOfSlot('busy', slot), { timeout: 15_000, what: 'the busy loop decided at the slot' });
    expect(skipped.status).toBe('skipped');
    expect(ms(skipped.created_at)).toBeGreaterThanOrEqual(slot);
    expect((await c.api('POST', `${LOOPS}/busy/runs/${busy.run.id}/cancel`)).status).toBe(200);
  }, 180_000);
});
