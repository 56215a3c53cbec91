/**
 * Phase timings of a pod on its runner (docs/runners.md "What a pod start costs"): with
 * DROVER_TRACE_POD_PHASES=1 in the runner's environment, one line per pod goes to the runner's
 * log (stderr) once the pod is cleaned up: when the runner was asked to start the pod (`at=`, epoch
 * milliseconds, so a bench can line it up with the server's times), each phase's end in
 * milliseconds since then, and the steps each phase took. Off (the default), marks cost nothing
 * but a call of an empty function.
 */
export interface PodPhases {
  /** `phase` has just ended. */
  mark(phase: string): void;
  /** The pod is done with: writes the line. */
  done(): void;
}

const OFF: PodPhases = { mark() {}, done() {} };

export const tracingPodPhases = (env: NodeJS.ProcessEnv = process.env): boolean => env.DROVER_TRACE_POD_PHASES === '1';

export function podPhases(key: string, on = tracingPodPhases(), write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): PodPhases {
  if (!on) return OFF;
  const t0 = performance.now();
  let last = t0;
  const marks: string[] = [`at=${Date.now()}`];
  return {
    mark(phase) {
      const now = performance.now();
      marks.push(`${phase}=${(now - t0).toFixed(1)}(+${(now - last).toFixed(1)})`);
      last = now;
    },
    done() {
      write(`pod-phases ${key} ${marks.join(' ')}`);
    },
  };
}
