/** "Run an agent" on a ticket: an agent or a preset, the prompt prefilled from the ticket, its repository. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { navigate } from '../context.ts';
import { nameOf, useNames } from '../names.ts';
import { ErrorBanner } from '../ui.tsx';
import { promptLine, type Runner } from './pods-model.ts';
import { ticketPrompt, type TicketDetail } from './ticket-model.ts';

interface Preset {
  name: string;
  agent_slug: string;
}

export function RunAgentForm({ ticket }: { ticket: TicketDetail }) {
  const names = useNames();
  const [agents, setAgents] = useState<string[]>([]);
  const [presets, setPresets] = useState<Preset[]>([]);
  const [choice, setChoice] = useState('');
  const [prompt, setPrompt] = useState(() => ticketPrompt(ticket));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<{ runners: Runner[] }>('GET', '/runners').then((r) => setAgents([...new Set(r.runners.flatMap((x) => x.agents.map((a) => a.slug)))].sort()), () => setAgents([]));
    // Presets arrive with the people work; without them the form offers agents only.
    api<{ presets: Preset[] }>('GET', '/presets').then((r) => setPresets(r.presets ?? []), () => setPresets([]));
  }, []);
  const chosen = choice || (agents[0] ? `agent:${agents[0]}` : '');
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const [kind, value] = [chosen.slice(0, chosen.indexOf(':')), chosen.slice(chosen.indexOf(':') + 1)];
      const lines = [promptLine(prompt), ticket.repository_id !== null ? `REPO ${ticket.repository_id}` : ''].filter(Boolean).join('\n');
      const body = { ...(kind === 'preset' ? { preset: value } : { agent_slug: value }), ticket_slug: ticket.slug, agentfile_layer: lines };
      const created = await api<{ pod: { pod_key: string } }>('POST', '/pods', body);
      navigate(`/pods/${encodeURIComponent(created.pod.pod_key)}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel stack" aria-labelledby="run-agent" onSubmit={submit}>
      <h2 id="run-agent">Run an agent</h2>
      {agents.length === 0 && presets.length === 0 ? (
        <p class="hint">No runner advertises an agent yet: start one (`drover runner`, see docs/runners.md) and its agents appear here.</p>
      ) : (
        <label>
          Agent or preset
          <select name="agent" value={chosen} onChange={(e) => setChoice(e.currentTarget.value)}>
            <optgroup label="Agents">
              {agents.map((a) => (
                <option value={`agent:${a}`}>{a}</option>
              ))}
            </optgroup>
            {presets.length > 0 && (
              <optgroup label="Presets">
                {presets.map((p) => (
                  <option value={`preset:${p.name}`}>
                    {p.name} ({p.agent_slug})
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
      )}
      <label>
        Prompt
        <textarea name="prompt" rows={5} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
      </label>
      <p class="hint">Repository: {ticket.repository_id === null ? 'none (the ticket has no repository)' : nameOf(names.repositories, ticket.repository_id)}</p>
      <ErrorBanner error={error} />
      <div>
        <button type="submit" disabled={busy || !chosen}>
          Run agent
        </button>
      </div>
    </form>
  );
}
