/** A pod's or run's `delivery` as lines for `pods get` and `loops run` (docs/agents.md "Getting the work back"). */
interface DeliveryShape {
  status: string;
  branch: string | null;
  head_commit: string | null;
  commits: { sha: string; subject: string }[];
  files_changed: number;
  insertions: number;
  deletions: number;
  merge_request: { id: number; url: string; state: string } | null;
  error: string | null;
}

/** Multi-line text (shown below its key), or null when there is no delivery. */
export function deliveryText(delivery: DeliveryShape | null | undefined): string | null {
  if (!delivery) return null;
  const lines = [`${delivery.status}${delivery.branch ? ` → ${delivery.branch}` : ''}${delivery.head_commit ? ` @ ${delivery.head_commit.slice(0, 12)}` : ''}`];
  if (delivery.commits.length > 0) {
    lines.push(`${delivery.files_changed} files changed, +${delivery.insertions} -${delivery.deletions}`);
    for (const c of delivery.commits) lines.push(`${c.sha.slice(0, 12)} ${c.subject}`);
  }
  if (delivery.merge_request) lines.push(`merge request #${delivery.merge_request.id} (${delivery.merge_request.state}) ${delivery.merge_request.url}`);
  if (delivery.error) lines.push(`error: ${delivery.error}`);
  // Always several lines, so it reads as a block below its key.
  return `${lines.join('\n')}\n`;
}
