/**
 * The bubblewrap command line of one pod's sandbox (docs/runners.md), in the way Flatpak builds its
 * own: a new root made of explicit mounts, nothing of the host visible unless named.
 *
 * - user namespace: the agent is a non-root uid (CLIs that refuse root work on a root runner);
 * - PID namespace, `--die-with-parent`: bwrap's init is pid 1; when the agent (its first child)
 *   exits, or bwrap's parent (the runner's process launcher) dies, the namespace ends and the
 *   kernel kills every process left in it, including ones that started their own session;
 * - IPC, UTS, cgroup and network namespaces too: the pod has a loopback of its own and no route
 *   out; what it may reach comes in through the Unix sockets of its network directory
 *   (../network/, docs/runners.md "Network"), bound read-only;
 * - mounts: the host view (./host-view.ts), a private /tmp, the pod's writable places, and the
 *   root and every hiding tmpfs made read-only at the end, so nothing but the workspace, HOME,
 *   the autopilot state directory and /tmp can be written.
 */
import { orderMounts, type Mount } from './host-view.ts';

/** What one pod may write and read beyond the shared view. */
export interface PodView {
  /** The working directory (the pod's workspace). */
  cwd: string;
  /** Read-write: the workspace, the pod's HOME, its autopilot state directory. */
  writable: string[];
  /** Read-only: e.g. the clone cache's objects the workspace's repository borrows. */
  readOnly: string[];
  /** The pod's network directory (its proxy's and endpoints' Unix sockets), bound read-only. */
  netDir?: string;
  /**
   * The size of the pod's /tmp and /dev/shm (tmpfs), within its memory limit: their pages are
   * charged to the pod's cgroup (docs/runners.md "Limits"). Undefined: the kernel's default.
   */
  tmpfsBytes?: number;
}

export interface Identity {
  uid: number;
  gid: number;
  /** Files put over /etc/passwd and /etc/group when the host has no entry for `uid`. */
  passwd: { passwd: string; group: string } | null;
}

const sized = (bytes: number | undefined): string[] => (bytes === undefined ? [] : ['--size', String(bytes)]);

export function bwrapArgs(shared: readonly Mount[], pod: PodView, identity: Identity): string[] {
  const mounts: Mount[] = [...shared, { kind: 'tmpfs', dest: '/tmp' }];
  if (identity.passwd) {
    mounts.push({ kind: 'ro-bind', source: identity.passwd.passwd, dest: '/etc/passwd' });
    mounts.push({ kind: 'ro-bind', source: identity.passwd.group, dest: '/etc/group' });
  }
  if (pod.netDir) mounts.push({ kind: 'ro-bind', source: pod.netDir, dest: pod.netDir });
  for (const dir of pod.readOnly) mounts.push({ kind: 'ro-bind', source: dir, dest: dir });
  for (const dir of pod.writable) mounts.push({ kind: 'bind', source: dir, dest: dir });

  const args = [
    '--unshare-user',
    '--uid',
    String(identity.uid),
    '--gid',
    String(identity.gid),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--unshare-net',
    '--die-with-parent',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...sized(pod.tmpfsBytes),
    '--tmpfs',
    '/dev/shm',
  ];
  const readOnlyAfter: string[] = ['/'];
  for (const mount of orderMounts(mounts)) {
    switch (mount.kind) {
      case 'ro-bind':
      case 'bind':
        args.push(`--${mount.kind}`, mount.source, mount.dest);
        break;
      case 'symlink':
        args.push('--symlink', mount.target, mount.dest);
        break;
      case 'tmpfs':
        if (mount.dest === '/tmp') args.push(...sized(pod.tmpfsBytes));
        args.push('--tmpfs', mount.dest);
        if (mount.dest !== '/tmp') readOnlyAfter.push(mount.dest);
        break;
      case 'mask-file':
        args.push('--ro-bind', '/dev/null', mount.dest);
        break;
    }
  }
  // Last: what bwrap created (the root, the directories leading to binds, hiding tmpfs) would
  // otherwise be writable by the agent, which owns them inside the namespace.
  for (const dest of readOnlyAfter) args.push('--remount-ro', dest);
  // bwrap also sets PWD to it (whatever else it is told): the agent's working directory.
  args.push('--chdir', pod.cwd);
  return args;
}
