import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useCan, useEvents } from '../context.ts';
import { resourceOf } from '../live.ts';
import { scopeReason } from '../scopes.ts';
import { ErrorBanner, Guarded, formatTime } from '../ui.tsx';
import type { Channel } from './channels.tsx';
import { Markdown } from '../markdown.tsx';
import { useNewest } from '../newest.ts';

interface Message {
  id: number;
  channel_id: number;
  content: string;
  sender_type: 'api' | 'agent' | 'system';
  pod_key: string | null;
  /** Who sent it, by name (people work); absent on older servers. */
  sender?: { type: string; id: number | null; name: string | null } | null;
  created_at: string;
}

const SENDERS = { api: 'API key', agent: 'Agent', system: 'System' };

function Document({ channel, canWrite, onSaved }: { channel: Channel; canWrite: boolean; onSaved: (c: Channel) => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(channel.document ?? '');
  const [error, setError] = useState<unknown>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      onSaved((await api<{ channel: Channel }>('PUT', `/channels/${channel.id}`, { document: text || null })).channel);
      setEditing(false);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="panel" aria-labelledby="document-title">
      <div class="view-head">
        <h2 id="document-title">Document</h2>
        {!editing && (
          <Guarded allowed={canWrite} reason={scopeReason('channels:write')} class="secondary" onClick={() => (setText(channel.document ?? ''), setEditing(true))}>
            Edit document
          </Guarded>
        )}
      </div>
      {editing ? (
        <form class="stack" onSubmit={save}>
          <label>
            Document text
            <textarea rows={10} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </label>
          <ErrorBanner error={error} />
          <div class="row">
            <button type="submit">Save document</button>
            <button type="button" class="secondary" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div class="message">{channel.document ? <Markdown text={channel.document} /> : <p class="hint">No document yet. The channel's agents and people share it: notes, decisions, a plan.</p>}</div>
      )}
    </section>
  );
}

export function ChannelPage({ id }: { id: number }) {
  const canWrite = useCan('channels:write');
  const [channel, setChannel] = useState<Channel | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<unknown>(null);
  const list = useRef<HTMLOListElement>(null);
  const [newestChannel, newestMessages] = [useNewest(), useNewest()];
  const load = () => {
    void newestChannel(api<{ channel: Channel }>('GET', `/channels/${id}`), (r) => setChannel(r.channel), setError);
    void newestMessages(api<{ messages: Message[] }>('GET', `/channels/${id}/messages?limit=100`), (r) => setMessages([...r.messages].reverse()), setError);
  };
  useEffect(load, [id]);
  useEvents(['message.', 'channel.'], (event) => {
    if (event.type === 'reset') return load();
    const message = resourceOf<Message>(event, 'message');
    if (message?.channel_id === id) setMessages((ms) => (ms.some((m) => m.id === message.id) ? ms : [...ms, message].sort((a, b) => a.id - b.id)));
    const changed = resourceOf<Channel>(event, 'channel');
    if (changed?.id === id) setChannel((c) => ({ ...c, ...changed }));
  });
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [messages.length]);
  const post = async (event: Event) => {
    event.preventDefault();
    if (!draft.trim()) return;
    try {
      const { message } = await api<{ message: Message }>('POST', `/channels/${id}/messages`, { content: draft });
      setMessages((ms) => (ms.some((m) => m.id === message.id) ? ms : [...ms, message]));
      setDraft('');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="channel-title">
      <p>
        <a href="#/channels">← Channels</a>
      </p>
      <h1 id="channel-title">{channel?.name ?? `Channel ${id}`}</h1>
      {channel?.description && <p class="hint">{channel.description}</p>}
      <ErrorBanner error={error} />
      <div class="grid2">
        <section aria-labelledby="chat-title">
          <h2 id="chat-title">Messages</h2>
          <ol class="chat" ref={list} aria-live="polite" aria-label="Messages" tabIndex={0}>
            {messages.map((m) => (
              <li class="message" data-message={m.id} data-sender={m.sender_type}>
                <div class="who">
                  <span class={`sender sender-${m.sender_type}`}>{SENDERS[m.sender_type] ?? m.sender_type}</span>
                  <span class="author" data-testid="message-author">
                    {m.pod_key ? <a href={`#/pods/${encodeURIComponent(m.pod_key)}`}>{m.sender?.name ?? m.pod_key}</a> : (m.sender?.name ?? (m.sender_type === 'system' ? 'Drover' : 'an API key'))}
                  </span>{' '}
                  <time dateTime={m.created_at}>{formatTime(m.created_at)}</time>
                </div>
                <Markdown text={m.content} />
              </li>
            ))}
          </ol>
          {messages.length === 0 && <p class="hint">No messages yet. Post one below, or let an agent post here with the Drover MCP tool channel_post (docs/mcp.md).</p>}
          <form class="stack" onSubmit={post}>
            <label>
              Message
              <textarea rows={2} value={draft} disabled={!canWrite} onInput={(e) => setDraft(e.currentTarget.value)} />
            </label>
            <div>
              <Guarded type="submit" allowed={canWrite} reason={scopeReason('channels:write')}>
                Post
              </Guarded>
            </div>
          </form>
        </section>
        {channel && <Document channel={channel} canWrite={canWrite} onSaved={setChannel} />}
      </div>
    </section>
  );
}
