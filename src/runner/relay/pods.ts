/**
 * The pods a runner's relay serves: each pod's placeholders (random, per pod, known only to this
 * runner's memory: worthless outside the relay and forgotten when the pod ends), its real keys,
 * its upstreams and its budgets with what it has spent (docs/agents.md "The model relay").
 */
import crypto from 'node:crypto';
import type { PodBudget } from '../../protocol/runner-link.ts';
import { MODEL_PROVIDERS, providerOfCredential, type ModelProviderId } from '../../agents/model-providers.ts';

/**
 * A spending limit the relay holds a pod to: `spent_usd` was spent elsewhere before the pod
 * started; `name` says which budget, as the error names it ("pod max_cost_usd", …).
 */
export type Budget = PodBudget;

export interface RelayedPod {
  key: string;
  /** placeholder → the credential it stands for. */
  readonly placeholders: Map<string, { credential: string; provider: ModelProviderId; value: string }>;
  readonly upstreams: Map<ModelProviderId, string>;
  budgets: Budget[];
  /** What the relay has seen this pod spend. */
  spentUsd: number;
  /** Set once a budget was reached: every further call is refused with it. */
  reached: string | null;
}

export interface PodRelaySetup {
  key: string;
  /** The pod's named credentials with their real values (only those the runner has). */
  credentials: Record<string, string>;
  /** The pod's `ENV` variables: a provider's base-URL variable there is its upstream. */
  env: Record<string, string>;
  budgets: Budget[];
}

export const PLACEHOLDER_PREFIX = 'sk-drover-relay-';

export class RelayPods {
  private readonly byKey = new Map<string, RelayedPod>();
  private readonly byPlaceholder = new Map<string, RelayedPod>();

  /** Registers a pod; answers, per credential that is a model key, the placeholder the agent gets. */
  attach(setup: PodRelaySetup): { pod: RelayedPod } {
    this.detach(setup.key);
    const pod: RelayedPod = { key: setup.key, placeholders: new Map(), upstreams: new Map(), budgets: setup.budgets, spentUsd: 0, reached: null };
    for (const [credential, value] of Object.entries(setup.credentials)) {
      const provider = providerOfCredential(credential);
      if (!provider) continue;
      const placeholder = PLACEHOLDER_PREFIX + crypto.randomBytes(24).toString('hex');
      pod.placeholders.set(placeholder, { credential, provider: provider.id, value });
      this.byPlaceholder.set(placeholder, pod);
    }
    for (const provider of MODEL_PROVIDERS) {
      const own = setup.env[provider.baseUrlVariable];
      pod.upstreams.set(provider.id, (own && own !== '' ? own : provider.defaultUpstream).replace(/\/+$/, ''));
    }
    this.byKey.set(setup.key, pod);
    return { pod };
  }

  detach(key: string): void {
    const pod = this.byKey.get(key);
    if (!pod) return;
    for (const placeholder of pod.placeholders.keys()) this.byPlaceholder.delete(placeholder);
    this.byKey.delete(key);
  }

  get(key: string): RelayedPod | undefined {
    return this.byKey.get(key);
  }

  /** The pod and key a placeholder stands for (compared in constant time once found by its hash-map slot). */
  find(placeholder: string): { pod: RelayedPod; credential: string; provider: ModelProviderId; value: string } | null {
    const pod = this.byPlaceholder.get(placeholder);
    const entry = pod?.placeholders.get(placeholder);
    return pod && entry ? { pod, ...entry } : null;
  }

  get size(): number {
    return this.byKey.size;
  }
}

const dollars = (value: number): string => `$${value.toFixed(value < 1 ? 4 : 2)}`;

/** The first budget the pod has reached, as the pod's error message says it; null while all have room. */
export function budgetReached(pod: RelayedPod): string | null {
  for (const budget of pod.budgets) {
    const spent = budget.spent_usd + pod.spentUsd;
    if (spent >= budget.limit_usd) return `budget reached: ${dollars(spent)} of ${dollars(budget.limit_usd)} (${budget.name})`;
  }
  return null;
}
