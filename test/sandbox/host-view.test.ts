/**
 * What the sandbox shows of the host (src/runner/sandbox/host-view.ts) and the bwrap command line
 * it makes (bwrap.ts), on temp trees: PATH programs that live elsewhere bring their package tree,
 * what not everyone may read is masked, hidden paths are covered, mounts come parents first, and
 * everything bwrap itself creates ends read-only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../src/runner/sandbox/bwrap.ts';
import { hostView, orderMounts, unreadableEntries, type Mount } from '../../src/runner/sandbox/host-view.ts';

let tmp: string;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-host-view-')));
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const binds = (mounts: Mount[]) => mounts.filter((m) => m.kind === 'ro-bind').map((m) => (m as { dest: string }).dest);

describe('hostView', () => {
  it('shows the system directories, PATH directories and where their programs really live; hides what it is told to', () => {
    // npm-style: <prefix>/node_modules/.bin/tool → ../pkg/cli.js; pkg needs its dependencies beside it.
    const modules = path.join(tmp, 'cache', 'node_modules');
    fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
    fs.mkdirSync(path.join(modules, '@scope', 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(modules, '@scope', 'pkg', 'cli.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
    fs.symlinkSync('../@scope/pkg/cli.js', path.join(modules, '.bin', 'tool'));
    // A single-file program elsewhere (a native installer's layout).
    const bin = path.join(tmp, 'home', '.local', 'bin');
    const versions = path.join(tmp, 'home', '.local', 'share', 'tool', 'versions');
    fs.mkdirSync(bin, { recursive: true });
    fs.mkdirSync(versions, { recursive: true });
    fs.writeFileSync(path.join(versions, '2.1.0'), 'binary', { mode: 0o755 });
    fs.writeFileSync(path.join(tmp, 'home', '.local', 'share', 'tool', 'secrets.json'), '{}');
    fs.symlinkSync(path.join(versions, '2.1.0'), path.join(bin, 'tool2'));
    const workDir = path.join(tmp, 'work');

    const mounts = hostView({ pathEnv: `${path.join(modules, '.bin')}:${bin}:relative/dir::/usr/bin`, hidden: [workDir], maskRoots: [] });
    const shown = binds(mounts);
    expect(shown).toEqual(expect.arrayContaining(['/usr', '/etc', path.join(modules, '.bin'), modules, bin, path.join(versions, '2.1.0')]));
    expect(shown).not.toContain('/usr/bin'); // inside /usr already
    expect(shown.some((p) => p.includes('relative'))).toBe(false);
    expect(shown).not.toContain(path.join(tmp, 'home', '.local', 'share', 'tool')); // only the program itself
    expect(mounts).toContainEqual({ kind: 'tmpfs', dest: workDir });
    for (const dir of ['/bin', '/lib']) {
      const stat = fs.lstatSync(dir);
      expect(mounts.some((m) => m.dest === dir && m.kind === (stat.isSymbolicLink() ? 'symlink' : 'ro-bind'))).toBe(true);
    }
  });

  it('masks what not everyone may read, and does not look behind a masked directory', () => {
    const root = path.join(tmp, 'etc-like');
    fs.mkdirSync(path.join(root, 'ssl', 'private'), { recursive: true });
    fs.mkdirSync(path.join(root, 'open'), { recursive: true });
    fs.writeFileSync(path.join(root, 'shadow'), 'root:$6$hash', { mode: 0o640 });
    fs.writeFileSync(path.join(root, 'passwd'), 'root:x:0:0', { mode: 0o644 });
    fs.writeFileSync(path.join(root, 'ssl', 'private', 'key.pem'), 'KEY', { mode: 0o600 });
    fs.writeFileSync(path.join(root, 'open', 'token'), 't', { mode: 0o600 });
    fs.chmodSync(path.join(root, 'ssl', 'private'), 0o710);
    fs.symlinkSync('/etc/shadow', path.join(root, 'link-to-shadow'));
    expect(unreadableEntries(root).sort((a, b) => a.dest.localeCompare(b.dest))).toEqual([
      { kind: 'mask-file', dest: path.join(root, 'open', 'token') },
      { kind: 'mask-file', dest: path.join(root, 'shadow') },
      { kind: 'tmpfs', dest: path.join(root, 'ssl', 'private') },
    ]);
  });
});

describe('orderMounts', () => {
  it('puts parents before children and keeps the given order among equals', () => {
    const order = orderMounts([
      { kind: 'bind', source: '/w/pods/p/workspace', dest: '/w/pods/p/workspace' },
      { kind: 'tmpfs', dest: '/w' },
      { kind: 'ro-bind', source: '/usr', dest: '/usr' },
      { kind: 'tmpfs', dest: '/tmp' },
      { kind: 'mask-file', dest: '/etc/shadow' },
      { kind: 'ro-bind', source: '/etc', dest: '/etc' },
    ]).map((m) => m.dest);
    expect(order).toEqual(['/w', '/usr', '/tmp', '/etc', '/etc/shadow', '/w/pods/p/workspace']);
  });
});

describe('bwrapArgs', () => {
  const args = bwrapArgs(
    [
      { kind: 'ro-bind', source: '/usr', dest: '/usr' },
      { kind: 'tmpfs', dest: '/srv/runner' },
    ],
    { cwd: '/srv/runner/pods/p/workspace', writable: ['/srv/runner/pods/p/workspace', '/srv/runner/pods/p/home'], readOnly: ['/srv/runner/repos/a.git/objects'] },
    { uid: 1000, gid: 1000, passwd: null },
  );
  const line = args.join(' ');

  it('isolates users, pids, IPC, the host name and the network, and dies with its parent', () => {
    expect(line).toContain('--unshare-user --uid 1000 --gid 1000');
    // The network namespace: the pod reaches only what its network walls expose (docs/runners.md "Network").
    for (const flag of ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--unshare-net', '--die-with-parent']) expect(args).toContain(flag);
    expect(args).not.toContain('--unshare-all');
  });

  it('binds the pod’s places after what hides them, and makes the rest read-only last', () => {
    const at = (needle: string) => line.indexOf(needle);
    expect(at('--tmpfs /srv/runner ')).toBeGreaterThan(-1);
    expect(at('--bind /srv/runner/pods/p/workspace /srv/runner/pods/p/workspace')).toBeGreaterThan(at('--tmpfs /srv/runner '));
    expect(at('--ro-bind /srv/runner/repos/a.git/objects /srv/runner/repos/a.git/objects')).toBeGreaterThan(at('--tmpfs /srv/runner '));
    expect(at('--tmpfs /tmp')).toBeGreaterThan(-1);
    expect(line.endsWith('--remount-ro / --remount-ro /srv/runner --chdir /srv/runner/pods/p/workspace')).toBe(true);
    expect(line).not.toContain('--remount-ro /tmp');
  });

  it('supplies a passwd entry when the host has none for the agent’s uid', () => {
    const withPasswd = bwrapArgs([], { cwd: '/w', writable: ['/w'], readOnly: [] }, { uid: 4242, gid: 4242, passwd: { passwd: '/r/passwd', group: '/r/group' } }).join(' ');
    expect(withPasswd).toContain('--ro-bind /r/passwd /etc/passwd');
    expect(withPasswd).toContain('--ro-bind /r/group /etc/group');
  });
});
