/** A pod's or run's delivery (docs/dashboard.md): where its work went, as a branch and a merge request. */

import type { Delivery } from '../api-types.ts';

export type { Delivery };
/** A merge request as a delivery and a ticket carry it (the ticket's has more fields). */
export type MergeRequest = NonNullable<Delivery['merge_request']> & { branch?: string };

export function MergeRequestLink({ mr }: { mr: MergeRequest }) {
  return (
    <a href={mr.url} target="_blank" rel="noopener noreferrer">
      !{mr.id} ({mr.state})
    </a>
  );
}

/** One line: status, branch, size, merge request. Nothing when there is no delivery. */
export function DeliverySummary({ delivery }: { delivery: Delivery | null | undefined }) {
  if (!delivery) return <span class="hint">—</span>;
  return (
    <span class="delivery" data-delivery={delivery.status}>
      <span class={`status status-${delivery.status}`}>{delivery.status.replace(/_/g, ' ')}</span>
      {delivery.branch && (
        <>
          {' '}
          <code>{delivery.branch}</code>
        </>
      )}
      {delivery.files_changed !== null && delivery.status === 'pushed' && (
        <span class="hint">
          {' '}
          {delivery.files_changed} files, +{delivery.insertions ?? 0} −{delivery.deletions ?? 0}
        </span>
      )}
      {delivery.merge_request && (
        <>
          {' '}
          <MergeRequestLink mr={delivery.merge_request} />
        </>
      )}
      {delivery.error && <span class="hint"> {delivery.error}</span>}
    </span>
  );
}

/** The delivery with its commits, for a pod's or run's page. */
export function DeliveryPanel({ delivery }: { delivery: Delivery | null | undefined }) {
  if (!delivery) return null;
  return (
    <section class="panel" aria-labelledby="delivery-title">
      <h2 id="delivery-title">Delivery</h2>
      <p>
        <DeliverySummary delivery={delivery} />
      </p>
      {delivery.commits.length > 0 && (
        <ul class="commits">
          {delivery.commits.map((c) => (
            <li>
              <code>{c.sha.slice(0, 10)}</code> {c.subject}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
