import type { RunnerWithCount } from '../../store/runners.ts';

/**
 * Placement by labels (docs/runners.md "Placement by labels"): a pod or loop that names
 * `runner_labels` may run only on a runner carrying every one of them; the queue and 503 rules
 * then apply to that subset of the organization's runners.
 */
export function carriesLabels(runner: RunnerWithCount, wanted: readonly string[]): boolean {
  if (wanted.length === 0) return true;
  const labels = JSON.parse(runner.labels) as string[];
  return wanted.every((label) => labels.includes(label));
}

/** The runners a pod with these labels may use. */
export function labelled(runners: RunnerWithCount[], wanted: readonly string[]): RunnerWithCount[] {
  return wanted.length === 0 ? runners : runners.filter((runner) => carriesLabels(runner, wanted));
}

/** A stored `runner_labels` column (JSON array or null) as a list. */
export const storedLabels = (stored: string | null): string[] => (stored === null ? [] : (JSON.parse(stored) as string[]));

/** The column for a list: null when there are none. */
export const labelsColumn = (labels: readonly string[] | undefined): string | null =>
  labels === undefined || labels.length === 0 ? null : JSON.stringify([...new Set(labels)].sort());
