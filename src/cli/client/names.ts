/**
 * People, runners and repositories by name (docs/cli.md "Names, not ids"): options that pick one
 * take its name or its id, and tables and records show names where the API answers ids. The lists
 * are read once per command, and only when needed; a key that may not read them gets the ids.
 */
import { ApiError, ORG_BASE, type DroverClient, type Schemas } from '../../client/index.ts';
import { UsageError, read, type CommandContext, type Parsed } from './framework.ts';

interface Named {
  id: number;
  name: string;
  /** A repository's `owner/name`, accepted as well. */
  full_name?: string;
}

export type NameKind = 'runner' | 'repository' | 'user';

/** How a kind is called in messages, and the command that lists it. */
const KINDS: Record<NameKind, { plural: string; list: string }> = {
  runner: { plural: 'runners', list: 'drover runners list' },
  repository: { plural: 'repositories', list: 'drover repos list' },
  user: { plural: 'users', list: 'drover users list' },
};

async function fetchList(client: DroverClient, kind: NameKind): Promise<Named[]> {
  if (kind === 'runner') return (await client.call(client.api.GET(`${ORG_BASE}/runners`, { params: { path: client.path } }))).data.runners;
  if (kind === 'user') return (await client.call(client.api.GET(`${ORG_BASE}/users`, { params: { path: client.path } }))).data.users;
  return (await client.call(client.api.GET(`${ORG_BASE}/repositories`, { params: { path: client.path } }))).data.repositories;
}

/** The people, runners and repositories of one command's organization, each list read at most once. */
export class Names {
  private readonly lists = new Map<NameKind, Promise<Named[] | null>>();
  private loaded = new Map<NameKind, Named[] | null>();
  constructor(private readonly client: DroverClient) {}

  /** The list, or null when the key may not read it (403): then ids stay ids. */
  private list(kind: NameKind): Promise<Named[] | null> {
    let list = this.lists.get(kind);
    if (!list) {
      list = fetchList(this.client, kind).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 403) return null;
        throw error;
      });
      this.lists.set(kind, list);
    }
    return list;
  }

  /** Loads what `label` will need (so that rendering stays synchronous). */
  async load(...kinds: NameKind[]): Promise<this> {
    await Promise.all(kinds.map((k) => this.list(k)));
    this.loaded = new Map(await Promise.all(kinds.map(async (k) => [k, await this.list(k)] as const)));
    return this;
  }

  /** `name` of a loaded kind, or the id when there is no such entry (deleted, or not readable). */
  name(kind: NameKind, id: number | null | undefined): string | null {
    if (id === null || id === undefined) return null;
    return this.loaded.get(kind)?.find((n) => n.id === id)?.name ?? String(id);
  }

  /** `name (id)` for records, which keep the id next to the name. */
  label(kind: NameKind, id: number | null | undefined): string | null {
    const name = this.name(kind, id);
    return name === null || name === String(id) ? name : `${name} (${id})`;
  }

  /** An option's value as an id: digits are an id; otherwise the name (or a repository's owner/name). */
  async idOf(kind: NameKind, option: string, value: string): Promise<number> {
    if (/^\d+$/.test(value) && Number(value) >= 1 && Number.isSafeInteger(Number(value))) return Number(value);
    const list = await this.list(kind);
    if (list === null) throw new UsageError(`--${option}: this API key may not list ${KINDS[kind].plural}; give the id`);
    const matches = list.filter((n) => n.name === value || n.full_name === value);
    if (matches.length === 1) return matches[0].id;
    if (matches.length === 0) throw new UsageError(`--${option}: no ${kind} named "${value}" (${KINDS[kind].list})`);
    throw new UsageError(`--${option}: ${matches.length} ${KINDS[kind].plural} are named "${value}" (ids ${matches.map((m) => m.id).join(', ')}); give the id`);
  }
}

/** The option `name` (a person, runner or repository, by name or id) as an id; undefined when not given. */
export async function pickedId(names: Names, p: Parsed, kind: NameKind, option: string): Promise<number | undefined> {
  const value = read.string(p, option);
  return value === undefined ? undefined : names.idOf(kind, option, value);
}

/** Like pickedId, with `none` (clears the field on update) as null. */
export async function pickedIdOrNone(names: Names, p: Parsed, kind: NameKind, option: string): Promise<number | null | undefined> {
  return read.string(p, option) === 'none' ? null : pickedId(names, p, kind, option);
}

/** The names a readable answer shows, loaded; with --json none are read (the JSON stays the API's). */
export async function namesFor(ctx: CommandContext, ...kinds: NameKind[]): Promise<Names> {
  const names = new Names(ctx.client());
  return ctx.json ? names : names.load(...kinds);
}

/** An actor (docs/api.md "Actors and activity"): who made a change, as the API records it. */
type Actor = NonNullable<Schemas['Ticket']['created_by']>;

/** Who, in a table cell: the person's name, `key NAME`, the pod's key, `loop SLUG`, `admin`, `system`. */
export function actorName(actor: Actor | null | undefined): string | null {
  if (!actor) return null;
  if (actor.type === 'api_key') return `key ${actor.name}`;
  if (actor.type === 'pod' || actor.type === 'loop') return `${actor.type === 'loop' ? 'loop ' : ''}${String(actor.id)}`;
  return actor.name;
}

/** Who, in a record: `Alice (user 3)`, `ci (API key 5)`, `pod p-…`, `loop nightly: Nightly (cron …)`, `admin`, `system`. */
export function actorText(actor: Actor | null | undefined): string | null {
  if (!actor) return null;
  switch (actor.type) {
    case 'user':
      return `${actor.name} (user ${actor.id})`;
    case 'api_key':
      return `${actor.name} (API key ${actor.id})`;
    case 'pod':
      return `pod ${String(actor.id)}`;
    case 'loop':
      return `loop ${String(actor.id)}: ${actor.name}`;
    default:
      return actor.name;
  }
}
