import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner, parseJsonObject } from '../ui.tsx';
import { MODES, POLICIES, type Loop } from './loops-model.ts';

const localZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
};

/** Create a loop (no `loop`) or edit one: cron and time zone, policy, variables, agent, prompt. */
export function LoopForm({ loop, onSaved }: { loop: Loop | null; onSaved: (loop: Loop) => void }) {
  const [v, setV] = useState({
    name: loop?.name ?? '',
    slug: loop?.slug ?? '',
    description: loop?.description ?? '',
    agent: loop?.custom_agent_slug ?? loop?.agent_slug ?? 'shell',
    template: loop?.prompt_template ?? '',
    variables: loop ? JSON.stringify(loop.prompt_variables, null, 2) : '{}',
    cron: loop?.cron_expression ?? '',
    zone: loop?.cron_timezone ?? localZone(),
    policy: loop?.concurrency_policy ?? 'skip',
    maxRuns: String(loop?.max_concurrent_runs ?? 1),
    timeout: String(loop?.timeout_minutes ?? 60),
    mode: loop?.execution_mode ?? 'direct',
    callback: loop?.callback_url ?? '',
    layer: loop?.agentfile_layer ?? '',
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const bind = (name: keyof typeof v) => ({ value: v[name], onInput: (e: Event) => setV({ ...v, [name]: (e.currentTarget as HTMLInputElement).value }) });
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = {
        name: v.name,
        prompt_template: v.template,
        agent_slug: v.agent,
        prompt_variables: parseJsonObject(v.variables, 'Variables'),
        cron_timezone: v.zone,
        concurrency_policy: v.policy,
        max_concurrent_runs: Number(v.maxRuns),
        timeout_minutes: Number(v.timeout),
        execution_mode: v.mode,
      };
      if (loop) {
        body.description = v.description || null;
        body.cron_expression = v.cron.trim() || null;
        body.callback_url = v.callback.trim() || null;
        body.agentfile_layer = v.layer.trim() || null;
        onSaved((await api<{ loop: Loop }>('PUT', `/loops/${encodeURIComponent(loop.slug)}`, body)).loop);
      } else {
        if (v.slug.trim()) body.slug = v.slug.trim();
        if (v.description) body.description = v.description;
        if (v.cron.trim()) body.cron_expression = v.cron.trim();
        if (v.callback.trim()) body.callback_url = v.callback.trim();
        if (v.layer.trim()) body.agentfile_layer = v.layer.trim();
        onSaved((await api<{ loop: Loop }>('POST', '/loops', body)).loop);
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <div class="row">
        <label>
          Name
          <input required {...bind('name')} />
        </label>
        {!loop && (
          <label>
            Slug (optional)
            <input {...bind('slug')} />
          </label>
        )}
        <label>
          Agent
          <input required {...bind('agent')} />
        </label>
      </div>
      <label>
        Prompt template ({'{{name}}'} placeholders)
        <textarea required rows={4} {...bind('template')} />
      </label>
      <label>
        Variables (JSON object)
        <textarea rows={3} {...bind('variables')} />
      </label>
      <div class="row">
        <label>
          Cron expression (five fields, empty: manual only)
          <input placeholder="0 9 * * 1-5" {...bind('cron')} />
        </label>
        <label>
          Time zone
          <input {...bind('zone')} />
        </label>
      </div>
      <div class="row">
        <label>
          Concurrency policy
          <select {...bind('policy')}>
            {POLICIES.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Max concurrent runs
          <input type="number" min={1} max={100} {...bind('maxRuns')} />
        </label>
        <label>
          Timeout (minutes)
          <input type="number" min={1} {...bind('timeout')} />
        </label>
        <label>
          Mode
          <select {...bind('mode')}>
            {MODES.map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
      </div>
      <details>
        <summary>Description, callback and agentfile</summary>
        <div class="stack">
          <label>
            Description
            <input {...bind('description')} />
          </label>
          <label>
            Callback URL
            <input type="url" {...bind('callback')} />
          </label>
          <label>
            Agentfile layer
            <textarea rows={3} {...bind('layer')} />
          </label>
        </div>
      </details>
      <ErrorBanner error={error} />
      <div>
        <button type="submit" disabled={busy}>
          {loop ? 'Save loop' : 'Create loop'}
        </button>
      </div>
    </form>
  );
}
