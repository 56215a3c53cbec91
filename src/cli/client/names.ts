/**
 * Runners and repositories by name (docs/cli.md, "Names, not ids"): options that pick one take its
 * name or its id, and tables and records show names where the API answers ids. The lists are read
 * once per command, and only when needed; a key that may not read them gets the ids.
 */
import { ApiError, ORG_BASE, type DroverClient } from '../../client/index.ts';
import { UsageError, read, type CommandContext, type Parsed } from './framework.ts';

interface Named {
  id: number;
  name: string;
  /** A repository's `owner/name`, accepted as well. */
  full_name?: string;
}

export type NameKind = 'runner' | 'repository';

async function fetchList(client: DroverClient, kind: NameKind): Promise<Named[]> {
  if (kind === 'runner') return (await client.call(client.api.GET(`${ORG_BASE}/runners`, { params: { path: client.path } }))).data.runners;
  return (await client.call(client.api.GET(`${ORG_BASE}/repositories`, { params: { path: client.path } }))).data.repositories;
}

/** The runners and repositories of one command's organization, each list read at most once. */
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
    if (list === null) throw new UsageError(`--${option}: this API key may not list ${kind === 'runner' ? 'runners' : 'repositories'}; give the id`);
    const matches = list.filter((n) => n.name === value || n.full_name === value);
    if (matches.length === 1) return matches[0].id;
    if (matches.length === 0) throw new UsageError(`--${option}: no ${kind} named "${value}" (drover ${kind === 'runner' ? 'runners' : 'repos'} list)`);
    throw new UsageError(`--${option}: ${matches.length} ${kind === 'runner' ? 'runners' : 'repositories'} are named "${value}" (ids ${matches.map((m) => m.id).join(', ')}); give the id`);
  }
}

/** The option `name` (a runner or repository, by name or id) as an id; undefined when not given. */
export async function pickedId(names: Names, p: Parsed, kind: NameKind, option: string): Promise<number | undefined> {
  const value = read.string(p, option);
  return value === undefined ? undefined : names.idOf(kind, option, value);
}

/** The names a readable answer shows, loaded; with --json none are read (the JSON stays the API's). */
export async function namesFor(ctx: CommandContext, ...kinds: NameKind[]): Promise<Names> {
  const names = new Names(ctx.client());
  return ctx.json ? names : names.load(...kinds);
}
