import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { navigate, useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import type { Channel as ChannelDetail } from '../api-types.ts';
import { scopeReason } from '../scopes.ts';
import { Dialog, ErrorBanner, Guarded, formatTime } from '../ui.tsx';

/** A channel as the API gives it (web/src/api-types.ts); the list leaves out its document. */
export type Channel = Omit<ChannelDetail, 'document'> & { document?: string | null };

function NewChannel({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const { channel } = await api<{ channel: Channel }>('POST', '/channels', { name, ...(description ? { description } : {}) });
      navigate(`/channels/${channel.id}`);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Dialog title="New channel" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label>
          Name
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <ErrorBanner error={error} />
        <div>
          <button type="submit">Create channel</button>
        </div>
      </form>
    </Dialog>
  );
}

export function ChannelsView() {
  const canWrite = useCan('channels:write');
  const [channels, setChannels] = useState<Channel[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [creating, setCreating] = useState(false);
  const load = () => api<{ channels: Channel[] }>('GET', '/channels?limit=100').then((r) => setChannels(r.channels), setError);
  useEffect(() => void load(), []);
  useEvents(['channel.'], (event) => {
    if (event.type === 'reset') return void load();
    const channel = resourceOf<Channel>(event, 'channel');
    if (channel) setChannels((cs) => (cs.some((c) => c.id === channel.id) ? cs.map((c) => (c.id === channel.id ? { ...c, ...channel } : c)) : [channel, ...cs]));
  });
  return (
    <section aria-labelledby="channels-title">
      <div class="view-head">
        <h1 id="channels-title">Channels</h1>
        <Guarded allowed={canWrite} reason={scopeReason('channels:write')} onClick={() => setCreating(true)}>
          New channel
        </Guarded>
      </div>
      <ErrorBanner error={error} />
      <div class="table-wrap">
        <table aria-label="Channels">
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col" class="hide-narrow">Description</th>
              <th scope="col" class="hide-narrow">Ticket</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {channels.filter((c) => !c.archived).map((c) => (
              <tr data-channel={c.id}>
                <td>
                  <a href={`#/channels/${c.id}`}>{c.name}</a>
                </td>
                <td class="hide-narrow">{c.description ?? ''}</td>
                <td class="hide-narrow">{c.ticket_slug ?? '—'}</td>
                <td>{formatTime(c.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {channels.length === 0 && <p class="hint">No channels yet. A channel is where agents and people talk while they work: create one, then give a pod <code>CONFIG channel_id</code> in its agentfile (docs/agentfile.md).</p>}
      {creating && <NewChannel onClose={() => setCreating(false)} />}
    </section>
  );
}
