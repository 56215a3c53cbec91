/**
 * The runner's process launcher (src/runner/launcher.ts with its helper process
 * src/runner/launcher-child.mjs) and `GroupProcess` (src/runner/process-group.ts), with real
 * processes: output of both streams, UTF-8 split across writes, exit code and signal, programs not
 * on PATH, stdin, stopping a whole process group (SIGTERM, then SIGKILL after the grace), many
 * launches at once, and the helper dying under running processes.
 *
 * Nothing is timed: the tests wait for conditions (`waitFor`), and gates (files the test creates)
 * order what a process does against what the test checks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessLauncher, type LaunchOptions } from '../../src/runner/launcher.ts';
import { GroupProcess } from '../../src/runner/process-group.ts';
import { childPids, commandLine, killGroup, processGone, tempDir, waitFor } from '../helpers/runner-process.ts';

const launchers: ProcessLauncher[] = [];
const groups = new Set<number>();
const dirs: string[] = [];

afterEach(async () => {
  for (const pid of groups) killGroup(pid);
  groups.clear();
  await Promise.all(launchers.splice(0).map((launcher) => launcher.close()));
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function newLauncher(): ProcessLauncher {
  const launcher = new ProcessLauncher();
  launchers.push(launcher);
  return launcher;
}

function scratch(): string {
  const dir = tempDir('launcher');
  dirs.push(dir);
  return dir;
}

/** Options with an output collector; `stdin` null unless given. */
function collect(extra: Partial<LaunchOptions> = {}) {
  let output = '';
  const options: LaunchOptions = {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdin: null,
    onOutput: (text) => (output += text),
    ...extra,
  };
  return { options, output: () => output };
}

/** `sh -c script` through the launcher; its group is killed after the test. */
async function sh(launcher: ProcessLauncher, script: string, extra: Partial<LaunchOptions> = {}) {
  const { options, output } = collect(extra);
  const launched = await launcher.launch('sh', ['-c', script], options);
  if (launched.pid !== undefined) groups.add(launched.pid);
  return { ...launched, output };
}

/** Like `sh`, through `GroupProcess.start`. */
async function group(launcher: ProcessLauncher, script: string) {
  const { options, output } = collect();
  const started = await GroupProcess.start(launcher, 'sh', ['-c', script], options);
  if (started.pid !== undefined) groups.add(started.pid);
  return { process: started, output };
}

/** The launcher helper of this test process (there is at most one alive at a time here). */
const helperPid = () =>
  waitFor(() => childPids(process.pid).find((pid) => commandLine(pid).includes('launcher-child.mjs')), {
    what: 'the launcher helper process',
  });

const lastLine = (text: string) => Number(text.trim().split('\n').at(-1));

describe('ProcessLauncher', () => {
  it('delivers stdout and stderr and reports a clean exit', async () => {
    const run = await sh(newLauncher(), 'echo to-stdout; echo to-stderr >&2');
    expect(run.pid).toBeGreaterThan(0);
    expect(await run.done).toEqual({ code: 0, signal: null, spawnError: null });
    expect(run.output().split('\n').sort()).toEqual(['', 'to-stderr', 'to-stdout']);
  });

  it('keeps a multi-byte character whole when its bytes arrive in two writes (each stream decoded on its own)', async () => {
    const gate = path.join(scratch(), 'gate');
    // "a" + the first two bytes of € on stdout, "x" + the first byte of é on stderr; after the gate, the rest.
    const run = await sh(
      newLauncher(),
      `printf 'a\\342\\202'; printf 'x\\303' >&2; while [ ! -e ${gate} ]; do sleep 0.02; done; printf '\\254b'; printf '\\251y' >&2`,
    );
    // The first halves have been read by the helper: only the complete characters came through.
    await waitFor(() => run.output().length === 2, { what: 'the first writes' });
    expect([...run.output()].sort()).toEqual(['a', 'x']);
    fs.writeFileSync(gate, '');
    expect(await run.done).toMatchObject({ code: 0, spawnError: null });
    const output = run.output();
    expect(output).not.toContain('\uFFFD');
    expect(output).toContain('€b');
    expect(output).toContain('éy');
    expect(output.length).toBe(6);
  });

  it('reports the exit code, and the signal that ended a process', async () => {
    const launcher = newLauncher();
    const exited = await sh(launcher, 'exit 3');
    expect(await exited.done).toEqual({ code: 3, signal: null, spawnError: null });
    const killed = await sh(launcher, 'kill -KILL $$');
    expect(await killed.done).toEqual({ code: null, signal: 'SIGKILL', spawnError: null });
  });

  it('a program not on PATH: no pid, a spawnError naming it, and the launcher goes on working', async () => {
    const launcher = newLauncher();
    const { options } = collect();
    const missing = await launcher.launch('drover-no-such-program', ['--flag'], options);
    expect(missing.pid).toBeUndefined();
    const result = await missing.done;
    expect(result).toMatchObject({ code: null, signal: null });
    expect(result.spawnError).toContain('drover-no-such-program');
    const after = await sh(launcher, 'echo still-here');
    expect(await after.done).toMatchObject({ code: 0 });
    expect(after.output()).toBe('still-here\n');
  });

  it('passes stdin text to the process; stdin null gives it /dev/null', async () => {
    const launcher = newLauncher();
    const fed = await sh(launcher, 'cat', { stdin: 'line one\nline two ü\n' });
    expect(await fed.done).toMatchObject({ code: 0 });
    expect(fed.output()).toBe('line one\nline two ü\n');
    const none = await sh(launcher, 'readlink /proc/self/fd/0; cat; echo end');
    expect(await none.done).toMatchObject({ code: 0 });
    expect(none.output()).toBe('/dev/null\nend\n');
  });

  it('runs 50 launches at once, each with its own output and exit code', async () => {
    const launcher = newLauncher();
    const runs = await Promise.all(Array.from({ length: 50 }, (_, i) => sh(launcher, `echo job-${i}; exit ${i % 7}`)));
    const results = await Promise.all(runs.map((run) => run.done));
    expect(new Set(runs.map((run) => run.pid)).size).toBe(50);
    results.forEach((result, i) => expect(result).toEqual({ code: i % 7, signal: null, spawnError: null }));
    runs.forEach((run, i) => expect(run.output()).toBe(`job-${i}\n`));
  });

  it('the helper killed under running processes: they end with an error naming the launcher, their groups are killed, and the next launch starts a new helper', async () => {
    const launcher = newLauncher();
    const runs = await Promise.all([1, 2].map(() => sh(launcher, 'sleep 300 & echo $!; wait')));
    const sleepers = await Promise.all(runs.map((run) => waitFor(() => lastLine(run.output()) || undefined, { what: 'the background sleep' })));
    const helper = await helperPid();

    process.kill(helper, 'SIGKILL');
    for (const run of runs) {
      const result = await run.done;
      expect(result).toMatchObject({ code: null, signal: null });
      expect(result.spawnError).toMatch(/launcher/);
    }
    for (const pid of [...runs.map((run) => run.pid!), ...sleepers]) {
      await waitFor(() => processGone(pid), { what: `process ${pid} to be gone` });
    }

    const again = await sh(launcher, 'echo after-restart');
    expect(await again.done).toEqual({ code: 0, signal: null, spawnError: null });
    expect(again.output()).toBe('after-restart\n');
    expect(await helperPid()).not.toBe(helper);
  });

  it('with several helpers: launches go to each in turn, a helper killed ends only its own processes, and close() ends them all', async () => {
    const launcher = new ProcessLauncher(3);
    launchers.push(launcher);
    const runs = await Promise.all([1, 2, 3].map(() => sh(launcher, 'echo $PPID; sleep 300')));
    const parents = await Promise.all(runs.map((run) => waitFor(() => lastLine(run.output()) || undefined, { what: 'the parent pid' })));
    const helpers = childPids(process.pid).filter((pid) => commandLine(pid).includes('launcher-child.mjs'));
    expect(helpers).toHaveLength(3);
    expect([...parents].sort()).toEqual([...helpers].sort());

    process.kill(parents[0], 'SIGKILL');
    expect((await runs[0].done).spawnError).toMatch(/launcher/);
    await waitFor(() => processGone(runs[0].pid!), { what: 'the first process to be gone' });
    for (const run of runs.slice(1)) expect(processGone(run.pid!)).toBe(false);

    for (const run of runs.slice(1)) process.kill(-run.pid!, 'SIGKILL');
    for (const run of runs.slice(1)) expect((await run.done).signal).toBe('SIGKILL');
    await launcher.close();
    for (const pid of helpers) await waitFor(() => processGone(pid), { what: `helper ${pid} to be gone` });
  });

  it('close() ends the helper', async () => {
    const launcher = newLauncher();
    launcher.start();
    const helper = await helperPid();
    expect(processGone(helper)).toBe(false);
    await launcher.close();
    await waitFor(() => processGone(helper), { what: 'the helper to be gone' });
  });
});

describe('GroupProcess', () => {
  it('stop() ends the whole process group with SIGTERM, a child the process started included', async () => {
    const { process: leader, output } = await group(newLauncher(), 'sleep 300 & echo $!; wait');
    const child = await waitFor(() => lastLine(output()) || undefined, { what: 'the child pid' });
    expect(() => process.kill(child, 0)).not.toThrow();

    leader.stop(60_000); // a long grace: only SIGTERM can end it within this test
    expect(await leader.done).toEqual({ code: null, signal: 'SIGTERM', spawnError: null });
    await waitFor(() => processGone(child), { what: 'the child to be gone' });
  });

  it('stop() SIGKILLs a group that ignores SIGTERM once the grace period is over', async () => {
    const { process: stubborn, output } = await group(newLauncher(), `trap '' TERM; sleep 300 & echo $!; wait`);
    const child = await waitFor(() => lastLine(output()) || undefined, { what: 'the child pid' });

    stubborn.stop(300);
    expect(await stubborn.done).toEqual({ code: null, signal: 'SIGKILL', spawnError: null });
    await waitFor(() => processGone(child), { what: 'the child (which ignored SIGTERM too) to be gone' });
  });

  it('stop() also SIGKILLs a member left behind when the leader itself ended on SIGTERM', async () => {
    // The member ignores SIGTERM and does not hold the output open, so the leader's end is the
    // process's end: the SIGKILL must still come at the end of the grace period.
    const { process: leader, output } = await group(newLauncher(), `(trap '' TERM; exec sleep 300) >/dev/null 2>&1 & echo $!; wait`);
    const member = await waitFor(() => lastLine(output()) || undefined, { what: 'the member pid' });

    leader.stop(300);
    expect((await leader.done).signal).toBe('SIGTERM');
    expect(processGone(member)).toBe(false);
    await waitFor(() => processGone(member), { what: 'the member that ignored SIGTERM to be SIGKILLed' });
  });
});

describe('the output quota, applied as the launcher reads (`pod_output_bytes_per_sec`, docs/decisions.md "Quotas")', () => {
  it('keeps about a second of output plus the rate, drops and counts the rest: kept + dropped = what was printed', async () => {
    const launcher = newLauncher();
    launcher.setOutputLimit(100_000);
    let dropped = 0;
    const printed = 5_000_000;
    const run = await sh(launcher, `head -c ${printed} /dev/zero | tr '\\0' a`, { onDropped: (bytes) => (dropped += bytes) });
    expect((await run.done).code).toBe(0);
    const kept = Buffer.byteLength(run.output());
    expect(kept).toBeGreaterThanOrEqual(100_000);
    // A second of burst plus the rate over the time the flood took (it took well under 10 s).
    expect(kept).toBeLessThan(100_000 + 1_000_000);
    expect(kept + dropped).toBe(printed);
    expect(run.output()).toMatch(/^a+$/);
  });

  it('multi-byte text is cut on character boundaries: what is kept decodes cleanly', async () => {
    const launcher = newLauncher();
    launcher.setOutputLimit(10_001);
    let dropped = 0;
    const run = await sh(launcher, `node -e "process.stdout.write('é€😀'.repeat(200000))"`, { onDropped: (bytes) => (dropped += bytes) });
    expect((await run.done).code).toBe(0);
    expect(dropped).toBeGreaterThan(0);
    expect(run.output()).not.toContain('\ufffd');
    expect(/^(é|€|😀)+$/u.test(run.output())).toBe(true);
  });

  it('0 means no limit, and a new limit applies to running agents', async () => {
    const launcher = newLauncher();
    launcher.setOutputLimit(1_000);
    launcher.setOutputLimit(0);
    let dropped = 0;
    const run = await sh(launcher, `head -c 3000000 /dev/zero | tr '\\0' b`, { onDropped: (bytes) => (dropped += bytes) });
    expect((await run.done).code).toBe(0);
    expect(run.output()).toHaveLength(3_000_000);
    expect(dropped).toBe(0);

    const dir = scratch();
    const gate = path.join(dir, 'go');
    let later = 0;
    const slow = await sh(launcher, `head -c 10000 /dev/zero | tr '\\0' c; while [ ! -e ${gate} ]; do sleep 0.05; done; head -c 3000000 /dev/zero | tr '\\0' d`, {
      onDropped: (bytes) => (later += bytes),
    });
    await waitFor(() => slow.output().length >= 10_000, { what: 'the first part' });
    launcher.setOutputLimit(50_000);
    fs.writeFileSync(gate, '');
    expect((await slow.done).code).toBe(0);
    expect(slow.output().startsWith('c'.repeat(10_000))).toBe(true);
    expect(later).toBeGreaterThan(2_000_000);
  });
});
