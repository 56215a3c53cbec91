/** The facts of a pod's page: what it is, where it ran, what it works on, and for how long. */
import type { ComponentChildren } from 'preact';
import { nameOf, useNames } from '../names.ts';
import { useNow } from '../now.ts';
import { Status, formatDuration, formatTime } from '../ui.tsx';
import { DeliverySummary } from './delivery.tsx';
import { ACTIVE, type Pod } from './pods-model.ts';

function Fact({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

export function PodFacts({ pod }: { pod: Pod }) {
  const names = useNames();
  const active = ACTIVE.includes(pod.status);
  // A running pod's duration moves on every second; a finished one's is fixed.
  const now = useNow(active && pod.started_at !== null);
  const ran = pod.started_at ? (pod.finished_at ? Date.parse(pod.finished_at) : now) - Date.parse(pod.started_at) : null;
  const env = Object.entries(pod.env ?? {});
  return (
    <dl class="facts">
      <Fact term="Status">
        <span data-testid="pod-status">
          <Status value={pod.status} />
          {pod.queue_position ? ` (#${pod.queue_position} in the queue)` : ''}
        </span>
      </Fact>
      <Fact term="Agent">{pod.agent_slug}</Fact>
      {pod.alias && <Fact term="Alias">{pod.alias}</Fact>}
      <Fact term="Runner">{pod.runner_id === null ? '—' : <a href={`#/runners/${pod.runner_id}`}>{nameOf(names.runners, pod.runner_id)}</a>}</Fact>
      {pod.ticket_slug && (
        <Fact term="Ticket">
          <a href={`#/tickets/${encodeURIComponent(pod.ticket_slug)}`}>{pod.ticket_slug}</a>
        </Fact>
      )}
      {pod.repository_id !== null && <Fact term="Repository">{nameOf(names.repositories, pod.repository_id)}</Fact>}
      {pod.branch && (
        <Fact term="Branch">
          <code>{pod.branch}</code>
        </Fact>
      )}
      {pod.delivery !== undefined && (
        <Fact term="Delivery">
          <DeliverySummary delivery={pod.delivery} />
        </Fact>
      )}
      <Fact term="Mode">{pod.mode}</Fact>
      {pod.created_by && <Fact term="Started by">{pod.created_by.name ?? pod.created_by.type}</Fact>}
      <Fact term="Started">{formatTime(pod.started_at)}</Fact>
      <Fact term="Finished">{formatTime(pod.finished_at)}</Fact>
      <Fact term="Duration">
        <span data-testid="pod-duration">{formatDuration(ran)}</span>
      </Fact>
      <Fact term="Exit code">{pod.exit_code ?? '—'}</Fact>
      {pod.error_message && <Fact term="Error">{pod.error_message}</Fact>}
      {pod.channel_id !== null && (
        <Fact term="Channel">
          <a href={`#/channels/${pod.channel_id}`}>{pod.channel_id}</a>
        </Fact>
      )}
      {env.length > 0 && (
        <Fact term="Env">
          <ul class="env">
            {env.map(([k, v]) => (
              <li>
                <code>
                  {k}={v}
                </code>
              </li>
            ))}
          </ul>
        </Fact>
      )}
    </dl>
  );
}
