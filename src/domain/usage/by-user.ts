import { parseActor } from '../../events/actor.ts';
import type { Executor } from '../../store/db.ts';
import type { UsageGroupRow } from '../../store/model-calls.ts';
import { listUsers } from '../../store/users.ts';

type Sums = Omit<UsageGroupRow, 'key'>;
const FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_usd'] as const;
const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);

/**
 * `group_by=user` (docs/agents.md "Budgets"): the groups the store made per stored `created_by`
 * actor, folded into one per person (a person's actor is stored once per name they had, and a loop
 * run a person started carries them too), keyed by the person's current name (the recorded one if
 * they were deleted since). Pods no person created (a key of no one, a cron slot, a pod's spawn,
 * the admin token) form the `null` group.
 */
export async function foldByUser(db: Executor, orgId: number, rows: readonly UsageGroupRow[]): Promise<UsageGroupRow[]> {
  const names = new Map((await listUsers(db, orgId)).map((user) => [Number(user.id), user.name]));
  const people = new Map<number | null, Sums & { key: string | null }>();
  for (const row of rows) {
    const actor = typeof row.key === 'string' ? parseActor(row.key) : null;
    const id = actor?.type === 'user' && typeof actor.id === 'number' ? actor.id : null;
    let group = people.get(id);
    if (!group) {
      group = { key: id === null ? null : (names.get(id) ?? actor!.name), input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null, pods: 0 };
      people.set(id, group);
    }
    for (const field of FIELDS) group[field] = add(group[field], row[field]);
    group.pods += row.pods;
  }
  // By name, then id (two people may share a name); the pods of no one last.
  return [...people.entries()]
    .sort(([a, x], [b, y]) => (a === null ? 1 : b === null ? -1 : x.key!.localeCompare(y.key!) || a - b))
    .map(([, group]) => group);
}
