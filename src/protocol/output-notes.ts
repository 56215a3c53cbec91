/**
 * The lines Drover writes into a pod's output when output over the organization's
 * `pod_output_bytes_per_sec` quota is dropped (docs/decisions.md). The runner drops at the source and
 * writes them; the server, which guards the quota too, writes the same lines when it drops.
 */

/** A new "dropping" line only after this long without a drop: a flood gets one, not one per chunk. */
export const DROP_EPISODE_GAP_MS = 1_000;

/** A note line, starting on a line of its own. */
export const noteLine = (text: string, atLineStart: boolean): string => `${atLineStart ? '' : '\n'}[drover] ${text}\n`;

export const droppingNote = (bytesPerSec: number): string =>
  `output over this organization's limit of ${bytesPerSec} bytes/s (pod_output_bytes_per_sec): the excess is dropped`;

export const droppedSummary = (bytes: number): string => `${bytes} bytes of this pod's output were dropped (over the pod_output_bytes_per_sec quota)`;
