/**
 * A run's callback deliveries (`GET …/runs/:run_id/deliveries`): every delivery with every attempt
 * (newest first), and **Redeliver** (`POST …/redeliver`) to send the run's event again.
 */
import { api } from '../api.ts';
import type { WebhookDelivery } from '../api-types.ts';
import { scopeReason } from '../scopes.ts';
import { Guarded, Status, formatTime } from '../ui.tsx';

/** A callback delivery with its attempts, as the API gives it (web/src/api-types.ts). */
export type CallbackDelivery = WebhookDelivery;

export function RunDeliveries(props: { base: string; deliveries: CallbackDelivery[]; canWrite: boolean; hasCallback: boolean; onChanged: () => void; onError: (e: unknown) => void }) {
  const redeliver = async () => {
    try {
      await api('POST', `${props.base}/redeliver`, {});
      props.onChanged();
    } catch (e) {
      props.onError(e);
    }
  };
  if (props.deliveries.length === 0 && !props.hasCallback) return null;
  return (
    <section aria-labelledby="deliveries-title">
      <div class="view-head">
        <h2 id="deliveries-title">Callback deliveries</h2>
        <Guarded allowed={props.canWrite} reason={scopeReason('loops:write')} class="secondary" onClick={redeliver}>
          Redeliver
        </Guarded>
      </div>
      {props.deliveries.length === 0 ? (
        <p class="hint">No delivery yet: the callback is sent when the run ends.</p>
      ) : (
        <div class="table-wrap">
          <table aria-label="Callback delivery attempts">
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col" class="hide-narrow">When</th>
              </tr>
            </thead>
            <tbody>
              {props.deliveries.flatMap((d) =>
                d.attempts.length === 0
                  ? [
                      <tr data-delivery={d.id}>
                        <td>{d.id}</td>
                        <td>—</td>
                        <td>
                          <Status value={d.status} />
                        </td>
                        <td>{d.next_attempt_at ? `next ${formatTime(d.next_attempt_at)}` : '—'}</td>
                        <td class="hide-narrow">{formatTime(d.created_at)}</td>
                      </tr>,
                    ]
                  : d.attempts.map((a, i) => (
                      <tr data-delivery={d.id} data-attempt={a.attempt}>
                        <td>{i === 0 ? d.id : ''}</td>
                        <td>{a.attempt}</td>
                        <td>{i === 0 ? <Status value={d.status} /> : <Status value={a.error ? 'failed' : 'delivered'} />}</td>
                        <td>
                          {a.status_code ?? '—'}
                          {a.error ? ` ${a.error}` : ''}
                          {a.duration_ms !== null ? <span class="hint"> ({a.duration_ms} ms)</span> : null}
                        </td>
                        <td class="hide-narrow">{formatTime(a.attempted_at)}</td>
                      </tr>
                    )),
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
