/**
 * What of the runner's machine a sandboxed agent sees (docs/runners.md), worked out once when the
 * runner starts: the mounts every pod's sandbox shares. The pod's own writable places (workspace,
 * HOME, autopilot state) are added per pod by bwrap.ts.
 *
 * Read-only: the system directories, every directory on the runner's PATH (and, for programs that
 * are symlinks into a package elsewhere — `node_modules/.bin/claude → ../@anthropic-ai/…` — the
 * package tree they live in), the runner's own program files, and what the operator adds.
 * Hidden: the runner's work dir (its credential, `credentials.json`, the clone caches, other pods)
 * and the server's data dir when the runner was told it (the local runner), even where they lie
 * inside a directory that is otherwise visible.
 * Masked: whatever inside the visible system directories is not readable by everyone. The agent's
 * uid maps to the runner's own, so a runner started as root would otherwise hand the agent what
 * only root may read (`/etc/shadow`, TLS private keys, database configuration).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathDirectories } from '../../agents/detect.ts';
import { PACKAGE_ROOT } from '../../paths.ts';

/** One mount of the sandbox, applied in order of depth (parents first). */
export type Mount =
  | { kind: 'ro-bind' | 'bind'; source: string; dest: string }
  | { kind: 'symlink'; target: string; dest: string }
  | { kind: 'tmpfs'; dest: string }
  | { kind: 'mask-file'; dest: string };

export interface HostViewOptions {
  /** The runner's PATH (agents' programs are looked up on it inside the sandbox too). */
  pathEnv: string;
  /** Paths that must not be visible at all (the runner's work dir, the server's data dir). */
  hidden: string[];
  /** Extra read-only paths the operator asked for (DROVER_SANDBOX_READ_ONLY). */
  extraReadOnly?: string[];
  /** Where masking looks for unreadable entries (default /etc and /opt); tests narrow it. */
  maskRoots?: string[];
}

/** The system directories (docs/runners.md "What an agent can and cannot see"), bound read-only when they exist. */
const SYSTEM_DIRS = ['/usr', '/etc', '/opt'];
/** Top-level directories that are symlinks into /usr on merged-/usr systems, directories elsewhere. */
const TOP_LEVEL_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * The runner's own program files: enough to run `drover` (e.g. `drover mcp`) inside a pod. The
 * lock file too: bin/build.mjs checks a bundle against it, and takes the bundle for stale (and
 * falls back to the TypeScript sources) when a file it was built from is missing.
 */
const PACKAGE_PARTS = ['bin', 'src', '.build', 'node_modules', 'package.json', 'package-lock.json'];
/** Stop looking for unreadable entries after this many (a huge /opt must not stall a start). */
const MASK_SCAN_LIMIT = 200_000;

const isUnder = (child: string, parent: string): boolean => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

function realpathOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/** The shared mounts of every pod's sandbox on this runner. */
export function hostView(options: HostViewOptions): Mount[] {
  const mounts: Mount[] = [];
  const readOnlyRoots: string[] = [];
  const addReadOnly = (p: string): void => {
    const real = realpathOrNull(p);
    if (real === null || readOnlyRoots.some((root) => isUnder(real, root))) return;
    readOnlyRoots.push(real);
    mounts.push({ kind: 'ro-bind', source: real, dest: real });
  };

  for (const dir of SYSTEM_DIRS) if (fs.existsSync(dir)) addReadOnly(dir);
  for (const dir of TOP_LEVEL_DIRS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) mounts.push({ kind: 'symlink', target: fs.readlinkSync(dir), dest: dir });
    else if (stat.isDirectory()) addReadOnly(dir);
  }
  // DNS: on systemd hosts /etc/resolv.conf points into /run, which is not visible otherwise.
  const resolv = realpathOrNull('/etc/resolv.conf');
  if (resolv && !isUnder(resolv, '/etc')) addReadOnly(resolv);

  for (const dir of pathDirectories(options.pathEnv)) {
    addReadOnly(dir);
    for (const target of programRoots(dir)) addReadOnly(target);
  }
  for (const part of PACKAGE_PARTS) {
    const file = path.join(PACKAGE_ROOT, part);
    if (fs.existsSync(file)) addReadOnly(file);
  }
  // The Node that runs the runner runs `drover mcp` in the pod, wherever it is installed.
  addReadOnly(path.dirname(process.execPath));
  for (const extra of options.extraReadOnly ?? []) addReadOnly(extra);

  for (const root of options.maskRoots ?? SYSTEM_DIRS) {
    if (readOnlyRoots.some((r) => isUnder(root, r))) mounts.push(...unreadableEntries(root));
  }
  for (const hidden of options.hidden) {
    const real = realpathOrNull(hidden) ?? path.resolve(hidden);
    mounts.push({ kind: 'tmpfs', dest: real });
  }
  return mounts;
}

/**
 * Where the programs of a PATH directory outside the system directories really live: the target
 * of each symlink, widened to the outermost `node_modules` it is in (a Node CLI needs its
 * dependencies), e.g. `<prefix>/lib/node_modules` for `npm install -g`.
 */
function programRoots(dir: string): string[] {
  const real = realpathOrNull(dir);
  if (real === null || SYSTEM_DIRS.some((root) => isUnder(real, root))) return [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(real, { withFileTypes: true });
  } catch {
    return [];
  }
  const roots = new Set<string>();
  for (const entry of entries) {
    if (!entry.isSymbolicLink()) continue;
    const target = realpathOrNull(path.join(real, entry.name));
    if (target === null || isUnder(target, real)) continue;
    const marker = `${path.sep}node_modules${path.sep}`;
    const at = target.indexOf(marker);
    roots.add(at === -1 ? target : target.slice(0, at + marker.length - 1));
  }
  return [...roots];
}

/**
 * Entries below `root` that not everyone may read (files without o+r, directories without o+rx),
 * as masks: an unreadable empty directory or file in their place. Symlinks are not followed.
 */
export function unreadableEntries(root: string): Mount[] {
  const masks: Mount[] = [];
  let seen = 0;
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++seen > MASK_SCAN_LIMIT) return;
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      let mode: number;
      try {
        mode = fs.lstatSync(full).mode;
      } catch {
        continue;
      }
      if (entry.isDirectory()) {
        if ((mode & 0o005) !== 0o005) masks.push({ kind: 'tmpfs', dest: full });
        else walk(full);
      } else if ((mode & 0o004) === 0) {
        masks.push({ kind: 'mask-file', dest: full });
      }
    }
  };
  walk(root);
  return masks;
}

/** Orders mounts so that a mount never hides one made inside it: by depth, parents first, stable. */
export function orderMounts(mounts: Mount[]): Mount[] {
  const depth = (m: Mount): number => m.dest.split('/').filter(Boolean).length;
  return mounts
    .map((mount, index) => ({ mount, index }))
    .sort((a, b) => depth(a.mount) - depth(b.mount) || a.index - b.index)
    .map(({ mount }) => mount);
}
