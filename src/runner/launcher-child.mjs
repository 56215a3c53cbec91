// The runner's process launcher: a small Node process that starts agent processes for the runner
// (src/runner/launcher.ts) and reports on them over its IPC channel.
//
// Why a process of its own, in plain JavaScript: starting a process from Node forks the caller,
// and a fork costs in proportion to the caller's memory (page tables, copy-on-write faults). The
// runner, and `drover serve` with its local runner, are large processes (the TypeScript loader
// alone adds ~40 MB); forking from them took 5-10 ms per agent and blocked their event loop
// meanwhile. Forked from this ~40 MB process, which loads nothing but Node's own modules, a start
// costs a fraction of that and never stalls the runner's socket or the API.
//
// It also applies the output quota at the source (`pod_output_bytes_per_sec`, docs/decisions.md "Quotas"): what an
// agent prints over it is read and dropped here, before it costs the runner or the server anything.
//
// Messages in:  {t: 'spawn', id, command, args, cwd, env, stdin, fd3, gated}, {t: 'go', ids},
//               {t: 'limit', bytesPerSec} (0: none)
// Messages out: {t: 'spawned', id, pid} (pid null if the program could not be started),
//               {t: 'out', id, text, stream: 'stdout'|'stderr'}, {t: 'dropped', id, bytes},
//               {t: 'done', id, code, signal, spawnError}
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** After the agent exits, how long a grandchild may hold its output pipes open before its group is killed. */
const DRAIN_AFTER_EXIT_MS = 2000;

/**
 * The go signals of gated processes by id: a pipe on the process's file descriptor 4, on which its
 * wrapper waits for one line before it execs the agent (src/runner/slot-gate.ts); `go` writes it.
 */
const gates = new Map();

/** Bytes per second each agent may print (stdout and stderr together); 0: no limit. */
let outputLimit = 0;

const isContinuation = (byte) => (byte & 0xc0) === 0x80;

/**
 * An agent's output quota: a token bucket holding one second of output. `admit(chunk)` returns
 * how many bytes of the chunk fit, cut back to a UTF-8 character boundary.
 */
function outputBucket() {
  let tokens = outputLimit;
  let at = Date.now();
  return (chunk) => {
    if (outputLimit === 0) return chunk.length;
    const now = Date.now();
    tokens = Math.min(outputLimit, tokens + ((now - at) * outputLimit) / 1000);
    at = now;
    let keep = chunk.length;
    if (keep > tokens) {
      keep = Math.max(0, Math.floor(tokens));
      while (keep > 0 && isContinuation(chunk[keep])) keep--;
    }
    tokens -= keep;
    return keep;
  };
}

const send = (message) => {
  if (process.connected) process.send(message);
};

function notFound(command, cwd, error) {
  if (error.code !== 'ENOENT') return error.message;
  // A missing working directory fails the same way as a missing program.
  return fs.existsSync(cwd) ? `the program "${command}" was not found on the runner's PATH` : `the working directory ${cwd} does not exist`;
}

function start({ id, command, args, cwd, env, stdin, fd3 = null, gated = false }) {
  let child;
  try {
    // No stdin text: /dev/null, not an (ended) pipe. Node's pipes are socketpairs, and bash run
    // with a socket on stdin takes itself for an rsh/ssh session and sources ~/.bashrc of the
    // runner's user (which would bring the runner's own environment into the shell agent).
    // fd3: bwrap's options (the agent's environment among them) on a pipe, never on a command line.
    const stdio = [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'];
    if (fd3 !== null || gated) stdio.push(fd3 !== null ? 'pipe' : 'ignore');
    if (gated) stdio.push('pipe');
    child = spawn(command, args, { cwd, env, detached: true, stdio });
  } catch (error) {
    send({ t: 'spawned', id, pid: null });
    send({ t: 'done', id, code: null, signal: null, spawnError: notFound(command, cwd, error) });
    return;
  }
  send({ t: 'spawned', id, pid: child.pid ?? null });
  if (gated && child.stdio[4]) {
    child.stdio[4].on('error', () => {});
    gates.set(id, child.stdio[4]);
  }

  // One decoder per stream: a multi-byte character split across two reads stays one character.
  // One bucket for both streams: the quota is per agent. Dropped bytes are counted and reported
  // before the next output (so the runner's note stands where dropping started), every 100 ms,
  // and before the end: one message per read of a flood would cost the runner more than the flood.
  const admit = outputBucket();
  let dropped = 0;
  let droppedTimer = null;
  const reportDropped = () => {
    if (droppedTimer) clearTimeout(droppedTimer);
    droppedTimer = null;
    if (dropped > 0) send({ t: 'dropped', id, bytes: dropped });
    dropped = 0;
  };
  // Which stream a text came from travels with it: the runner reads the agent's machine-readable
  // output from stdout alone, where stderr lines cannot cut into it.
  for (const [name, stream] of [['stdout', child.stdout], ['stderr', child.stderr]]) {
    let decoder = new StringDecoder('utf8');
    let afterDrop = false;
    stream.on('data', (chunk) => {
      if (afterDrop) {
        // The rest of a character whose start was dropped.
        let start = 0;
        while (start < chunk.length && isContinuation(chunk[start])) start++;
        chunk = chunk.subarray(start);
      }
      const keep = admit(chunk);
      const text = keep > 0 ? decoder.write(chunk.subarray(0, keep)) : '';
      if (text) {
        reportDropped();
        send({ t: 'out', id, text, stream: name });
      }
      afterDrop = keep < chunk.length;
      if (afterDrop) {
        dropped += chunk.length - keep;
        droppedTimer ??= setTimeout(reportDropped, 100);
        // A half character still pending belongs to what was dropped.
        decoder = new StringDecoder('utf8');
      }
    });
    stream.on('end', () => {
      const rest = decoder.end();
      if (rest) {
        reportDropped();
        send({ t: 'out', id, text: rest, stream: name });
      }
    });
  }
  child.stdin?.on('error', () => {});
  if (stdin !== null) child.stdin?.end(stdin);
  if (fd3 !== null) {
    child.stdio[3].on('error', () => {});
    child.stdio[3].end(fd3);
  }

  let spawnError = null;
  let finished = false;
  const finish = (code, signal) => {
    if (finished) return;
    finished = true;
    gates.get(id)?.destroy();
    gates.delete(id);
    reportDropped();
    send({ t: 'done', id, code, signal, spawnError });
  };
  child.once('error', (error) => {
    spawnError = notFound(command, cwd, error);
    if (child.pid === undefined) finish(null, null);
  });
  child.once('close', finish);
  // A leftover grandchild can hold the output pipes open after the agent exits: give the streams
  // a moment to drain, then end the group and report the agent's own exit.
  child.once('exit', (code, signal) => {
    setTimeout(() => {
      if (finished) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
      finish(code, signal);
    }, DRAIN_AFTER_EXIT_MS).unref();
  });
}

process.on('message', (message) => {
  if (message && message.t === 'spawn') start(message);
  else if (message && message.t === 'go' && Array.isArray(message.ids)) {
    for (const id of message.ids) {
      gates.get(id)?.end('\n');
      gates.delete(id);
    }
  }
  else if (message && message.t === 'limit' && Number.isFinite(message.bytesPerSec) && message.bytesPerSec >= 0) outputLimit = message.bytesPerSec;
});
// The runner is gone: nobody is left to report to. The agents run in process groups of their own
// and are left as the runner left them (a restarted runner ends abandoned agents).
process.on('disconnect', () => process.exit(0));
