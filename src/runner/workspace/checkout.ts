/**
 * A pod's checkout: a git repository of its own in the workspace (docs/runners.md "Git"), which the
 * agent can commit to, configure and break without touching the runner's clone cache or another
 * pod. Cheap: its objects are the cache's, borrowed read-only through `objects/info/alternates`
 * (nothing is copied; only the files of the branch are written), and its remote-tracking
 * branches are written straight from the cache's refs.
 *
 * The local branch is BRANCH itself, with `origin/<BRANCH>` as upstream, so `git status`, `git
 * pull` and `git push` inside the workspace behave as in any clone. `origin` is the registered URL
 * (never with the token: the agent pushes with credentials of its own, e.g. a CREDENTIAL).
 *
 * The runner writes into a workspace only before any agent process has run in it. A persistent
 * workspace an agent has used is only ever touched from inside the pod's sandbox (./refresh in
 * workspaces.ts), since git obeys a repository's configuration, and that configuration is the
 * agent's to write (`core.sshCommand`, filters and the like run programs).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from './errors.ts';
import { FETCH_REFSPEC, type OriginRefs, type Repo } from './cache.ts';
import { gitFailureReason, runGit, workspaceGitEnv } from './git.ts';

/** The identity commits get when the agent's HOME brings none (agents must be able to commit). */
export const AGENT_IDENTITY = { name: 'Drover Agent', email: 'agent@drover.invalid' };

export interface CheckoutRequest {
  dir: string;
  repo: Repo;
  /** origin's branches, as the cache has them now. */
  refs: OriginRefs;
  /** The branch to work on: checked out from origin/<branch>, or from the default branch when it is new. */
  branch: string;
  /** The commit to start from. */
  start: string;
  /** Set user.name/user.email in the repository (false when the agent's HOME has an identity). */
  identity: boolean;
  timeoutMs: number;
}

/** Makes the checkout in `dir`, which must not exist yet. */
export async function createCheckout(request: CheckoutRequest): Promise<void> {
  const { dir, repo, branch, timeoutMs } = request;
  const env = workspaceGitEnv('', '');
  const failed = (what: string, result: Awaited<ReturnType<typeof runGit>>) =>
    new WorkspaceError(`${what} failed: ${gitFailureReason(result, repo.token, timeoutMs)}`);

  await fs.mkdir(path.dirname(dir), { recursive: true });
  const init = await runGit(['init', '--quiet', `--initial-branch=${branch}`, dir], { cwd: path.dirname(dir), env, timeoutMs });
  if (init.code !== 0) throw failed('creating the workspace', init);
  const gitDir = path.join(dir, '.git');
  await fs.writeFile(path.join(gitDir, 'objects', 'info', 'alternates'), `${path.join(repo.cache, 'objects')}\n`);
  await fs.writeFile(path.join(gitDir, 'packed-refs'), packedRefs(request.refs));
  await fs.appendFile(path.join(gitDir, 'config'), configText(repo.url, branch, request.identity));
  const checkout = await runGit(['reset', '--quiet', '--hard', request.start], { cwd: dir, env, timeoutMs });
  if (checkout.code !== 0) throw failed('checking out the workspace', checkout);
}

/** `packed-refs` text for `refs`, sorted by name as git writes it. */
export function packedRefs(refs: OriginRefs): string {
  const lines = [...refs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, sha]) => `${sha} ${name}\n`);
  return `# pack-refs with: peeled fully-peeled sorted \n${lines.join('')}`;
}

/** The `update-ref --stdin` commands that make a repository's origin/* equal to `refs`. */
export function refUpdates(current: OriginRefs, refs: OriginRefs): string {
  const lines: string[] = [];
  for (const [name, sha] of refs) if (current.get(name) !== sha) lines.push(`update ${name} ${sha}`);
  for (const name of current.keys()) if (!refs.has(name)) lines.push(`delete ${name}`);
  return lines.map((l) => `${l}\n`).join('');
}

function configText(url: string, branch: string, identity: boolean): string {
  // The checkout is written here and read in the pod's sandbox, where its files show another
  // device number: with the full stat check git would hash every file again at its first look
  // (seconds in a large repository, the capture's included; docs/agents.md "Getting the work back").
  let text = `[core]\n\tcheckStat = minimal\n[remote "origin"]\n\turl = ${quote(url)}\n\tfetch = ${FETCH_REFSPEC}\n`;
  text += `[branch ${quote(branch)}]\n\tremote = origin\n\tmerge = ${quote(`refs/heads/${branch}`)}\n`;
  if (identity) text += `[user]\n\tname = ${AGENT_IDENTITY.name}\n\temail = ${AGENT_IDENTITY.email}\n`;
  return text;
}

/** A git config value or subsection name in double quotes (`"` and `\` escaped). */
function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
