import { useEffect, useState } from 'preact/hooks';
import { BUILTIN_AGENT_SLUGS } from '../../../src/protocol/enums.ts';
import { api } from '../api.ts';
import { useNames } from '../names.ts';
import type { Runner } from './pods-model.ts';
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
    agent: loop?.custom_agent_slug ? `custom:${loop.custom_agent_slug}` : (loop?.agent_slug ?? 'claude-code'),
    repository: loop?.repository_id ? String(loop.repository_id) : '',
    runner: loop?.runner_id ? String(loop.runner_id) : '',
    branch: loop?.branch_name ?? '',
    template: loop?.prompt_template ?? '',
    variables: loop ? JSON.stringify(loop.prompt_variables, null, 2) : '{}',
    cron: loop?.cron_expression ?? '',
    zone: loop?.cron_timezone ?? localZone(),
    policy: loop?.concurrency_policy ?? 'skip',
    maxRuns: String(loop?.max_concurrent_runs ?? 1),
    timeout: String(loop?.timeout_minutes ?? 60),
    // The API's default for a new loop (docs/api.md): the form proposes the same.
    mode: loop?.execution_mode ?? 'autopilot',
    callback: loop?.callback_url ?? '',
    layer: loop?.agentfile_layer ?? '',
  });
  const names = useNames();
  const [advertised, setAdvertised] = useState<Set<string>>(new Set());
  useEffect(() => {
    api<{ runners: Runner[] }>('GET', '/runners').then((r) => setAdvertised(new Set(r.runners.flatMap((x) => x.agents.map((a) => a.slug)))), () => undefined);
  }, []);
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
        ...(v.agent.startsWith('custom:') ? { custom_agent_slug: v.agent.slice(7) } : { agent_slug: v.agent }),
        prompt_variables: parseJsonObject(v.variables, 'Variables'),
        cron_timezone: v.zone,
        concurrency_policy: v.policy,
        max_concurrent_runs: Number(v.maxRuns),
        timeout_minutes: Number(v.timeout),
        execution_mode: v.mode,
      };
      const optional = { repository_id: v.repository ? Number(v.repository) : null, runner_id: v.runner ? Number(v.runner) : null, branch_name: v.branch.trim() || null };
      for (const [k, value] of Object.entries(optional)) if (loop || value !== null) body[k] = value;
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
          <select name="agent" required {...bind('agent')}>
            {BUILTIN_AGENT_SLUGS.map((a) => (
              <option value={a}>
                {a}
                {advertised.has(a) ? '' : ' (no runner has it yet)'}
              </option>
            ))}
            {loop?.custom_agent_slug && <option value={`custom:${loop.custom_agent_slug}`}>{loop.custom_agent_slug} (custom)</option>}
          </select>
        </label>
      </div>
      <div class="row">
        <label>
          Repository
          <select name="repository" {...bind('repository')}>
            <option value="">None</option>
            {names.repositories.map((r) => (
              <option value={String(r.id)}>{r.name}</option>
            ))}
          </select>
        </label>
        <label>
          Runner
          <select name="runner" {...bind('runner')}>
            <option value="">Any runner</option>
            {names.runners.map((r) => (
              <option value={String(r.id)}>{r.name}</option>
            ))}
          </select>
        </label>
        <label>
          Branch
          <input name="branch" placeholder="the repository's default" {...bind('branch')} />
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
          <select name="mode" {...bind('mode')}>
            {MODES.map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
      </div>
      <details>
        <summary>Description, callback and agentfile lines</summary>
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
            Agentfile lines (ENV, CREDENTIAL, CONFIG, one a line)
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
