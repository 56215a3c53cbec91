/**
 * `bin/build.mjs` (`entryModule`, run by `bin/drover.mjs` on every start): the bundle
 * <package>/.build/main.mjs is made on the first run, reused while the sources (src/, package.json,
 * the build script) have the same contents, rebuilt when they changed, whatever the files'
 * timestamps; processes starting together leave one complete bundle; where .build cannot be made,
 * the sources run through tsx.
 *
 * Everything runs in a copy of the package (bin/, src/, package.json, node_modules linked to this
 * checkout's), so neither this checkout's sources nor its .build are touched.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT } from '../helpers/server-process.ts';

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const RUN_TIMEOUT_MS = 60_000;

interface Copy {
  root: string;
  bundle: string;
  buildDir: string;
}

function makeCopy(): Copy {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-build-test-'));
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const entry of ['bin', 'src']) fs.cpSync(path.join(REPO_ROOT, entry), path.join(root, entry), { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const buildDir = path.join(root, '.build');
  return { root, buildDir, bundle: path.join(buildDir, 'main.mjs') };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node <args>` in the copy, killed after RUN_TIMEOUT_MS. */
function runNode(copy: Copy, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: copy.root, env: { PATH: process.env.PATH ?? '', HOME: copy.root }, timeout: RUN_TIMEOUT_MS, killSignal: 'SIGKILL' },
      (error: ExecFileException | null, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: error && code === null ? `${stderr}\n${error.message}` : stderr });
      },
    );
  });
}

async function expectVersion(copy: Copy): Promise<void> {
  const run = await drover(copy, ['serve', '--version']);
  expect(run, run.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
}

/**
 * Identity of the bundle file: a rebuild writes a new file and renames it over the old one. (Only
 * an unchanged stamp is conclusive: a file renamed over the old one may get its freed inode number.)
 */
function bundleStamp(copy: Copy): { ino: number; mtimeMs: number } {
  const stat = fs.statSync(copy.bundle);
  return { ino: stat.ino, mtimeMs: stat.mtimeMs };
}

/** `node <copy>/bin/drover.mjs <args>`. */
const drover = (copy: Copy, args: string[]): Promise<Run> => runNode(copy, [path.join(copy.root, 'bin', 'drover.mjs'), ...args]);

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Sets a file's modification time (and access time) to `at` (epoch ms). */
const touch = (file: string, at: number) => fs.utimesSync(file, at / 1000, at / 1000);

/** Changes a file's contents (a comment line appended), as an edit would. */
const edit = (file: string) => fs.appendFileSync(file, `\n// edited ${crypto.randomBytes(4).toString('hex')}\n`);

const BUILD_FILES = ['main.mjs', 'main.sources'];

describe('bin/build.mjs: the bundle drover runs', () => {
  it('the first run prints the version and leaves <package>/.build/main.mjs and its sources stamp (nothing else)', async () => {
    const copy = makeCopy();
    expect(fs.existsSync(copy.buildDir)).toBe(false);
    await expectVersion(copy);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(BUILD_FILES);
    expect(fs.statSync(copy.bundle).size).toBeGreaterThan(10_000);
    // The bundle is plain JavaScript that works on its own (without bin/).
    const direct = await runNode(copy, ['--input-type=module', '-e', `const { main } = await import(${JSON.stringify(pathToFileURL(copy.bundle).href)}); await main(['serve', '--version']);`]);
    expect(direct, direct.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('a second run reuses the bundle: not rewritten', async () => {
    const copy = makeCopy();
    await expectVersion(copy);
    const first = bundleStamp(copy);
    const content = sha256(copy.bundle);
    await expectVersion(copy);
    await expectVersion(copy);
    expect(bundleStamp(copy)).toEqual(first);
    expect(sha256(copy.bundle)).toBe(content);
  });

  it('a source file edited after the build makes the next run rebuild, once', async () => {
    const copy = makeCopy();
    await expectVersion(copy);
    const before = bundleStamp(copy);
    edit(path.join(copy.root, 'src', 'store', 'group-commit.ts'));
    await expectVersion(copy);
    const rebuilt = bundleStamp(copy);
    expect(rebuilt).not.toEqual(before);
    await expectVersion(copy);
    expect(bundleStamp(copy)).toEqual(rebuilt);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(BUILD_FILES);
  });

  it('timestamps do not matter: files touched into the future or the past rebuild nothing; an edited plain-JavaScript file under src/ rebuilds', async () => {
    const copy = makeCopy();
    await expectVersion(copy);
    const before = bundleStamp(copy);
    touch(path.join(copy.root, 'src', 'main.ts'), Date.now() + 60 * 60_000);
    touch(path.join(copy.root, 'src', 'app.ts'), Date.now() - 365 * 24 * 60 * 60_000);
    await expectVersion(copy);
    await expectVersion(copy);
    expect(bundleStamp(copy)).toEqual(before);

    const content = sha256(copy.bundle);
    edit(path.join(copy.root, 'src', 'store', 'checkpoint-worker.mjs'));
    // Its timestamp set back before the bundle's: only the contents tell.
    touch(path.join(copy.root, 'src', 'store', 'checkpoint-worker.mjs'), before.mtimeMs - 60_000);
    await expectVersion(copy);
    expect(bundleStamp(copy)).not.toEqual(before);
    // The helper is not part of the bundle (it runs on its own), so the bundle's text is unchanged.
    expect(sha256(copy.bundle)).toBe(content);
  });

  it('several runs started at the same moment all succeed and leave one complete bundle, no temporary files', async () => {
    const copy = makeCopy();
    const runs = await Promise.all(Array.from({ length: 6 }, () => drover(copy, ['serve', '--version'])));
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(BUILD_FILES);
    const raced = sha256(copy.bundle);

    // Complete: byte for byte what one run alone builds from the same sources.
    fs.rmSync(copy.buildDir, { recursive: true });
    await expectVersion(copy);
    expect(sha256(copy.bundle)).toBe(raced);
  });

  it('several runs started at the same moment on a stale bundle: all succeed, one bundle, no temporary files', async () => {
    const copy = makeCopy();
    await expectVersion(copy);
    const before = bundleStamp(copy);
    edit(path.join(copy.root, 'src', 'main.ts'));
    const runs = await Promise.all(Array.from({ length: 6 }, () => drover(copy, ['serve', '--version'])));
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(BUILD_FILES);
    const rebuilt = bundleStamp(copy);
    expect(rebuilt).not.toEqual(before);
    // The bundle left is up to date: the next run keeps it.
    await expectVersion(copy);
    expect(bundleStamp(copy)).toEqual(rebuilt);
  });

  it('a new package.json (a version bump) makes the next run rebuild', async () => {
    const copy = makeCopy();
    await expectVersion(copy);
    const manifest = path.join(copy.root, 'package.json');
    const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string };
    fs.writeFileSync(manifest, JSON.stringify({ ...pkg, version: '99.0.0' }, null, 2));
    touch(manifest, bundleStamp(copy).mtimeMs - 60_000);
    const run = await drover(copy, ['serve', '--version']);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: '99.0.0\n' });
  });

  it('the client commands and the help run from a bundle of their own (cli.mjs), which imports nothing but Node built-ins', async () => {
    const copy = makeCopy();
    fs.copyFileSync(path.join(REPO_ROOT, 'package-lock.json'), path.join(copy.root, 'package-lock.json'));
    const help = await drover(copy, ['tickets', '--help']);
    expect(help, help.stderr).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^Usage: drover tickets <command>/);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(['cli.mjs', 'cli.sources']);
    const cli = fs.readFileSync(path.join(copy.buildDir, 'cli.mjs'), 'utf8');
    const imports = [...cli.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((name) => !name.startsWith('node:'))).toEqual([]);
    const top = await drover(copy, ['--help']);
    expect(top.stdout).toMatch(/^drover: a control plane/);
    // `drover --version` too: the client's bundle answers it, without the server's being built (it took ~1 s).
    for (const word of ['--version', 'version']) {
      const version = await drover(copy, [word]);
      expect(version, version.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    }
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(['cli.mjs', 'cli.sources']);

    // The server's bundle is made when a server command first runs; an edit makes each stale, rebuilt on its next use.
    await expectVersion(copy);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(['cli.mjs', 'cli.sources', ...BUILD_FILES].sort());
    const before = fs.statSync(path.join(copy.buildDir, 'cli.mjs')).ino;
    edit(path.join(copy.root, 'src', 'cli', 'client', 'output.ts'));
    expect((await drover(copy, ['pods', '--help'])).code).toBe(0);
    expect(fs.statSync(path.join(copy.buildDir, 'cli.mjs')).ino).not.toBe(before);
  });

  it('drover admin runs from a bundle of its own (admin.mjs), which imports nothing but Node built-ins, and answers as before', async () => {
    const copy = makeCopy();
    const help = await drover(copy, ['admin', '--help']);
    expect(help, help.stderr).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/drover admin/);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(['admin.mjs', 'admin.sources']);
    const admin = fs.readFileSync(path.join(copy.buildDir, 'admin.mjs'), 'utf8');
    const imports = [...admin.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((name) => !name.startsWith('node:'))).toEqual([]);
    // A usage error exits 2, an unreachable server 3, as the commands did from the main bundle.
    const usage = await drover(copy, ['admin', 'orgs', 'frobnicate']);
    expect(usage.code, usage.stderr).toBe(2);
    const unreachable = await drover(copy, ['admin', 'orgs', 'list', '--server', 'http://127.0.0.1:9', '--admin-token', 'drvadm_x']);
    expect(unreachable.code, unreachable.stderr).toBe(3);
    expect(unreachable.stderr).toMatch(/127\.0\.0\.1:9/);
    expect(fs.readdirSync(copy.buildDir).sort()).toEqual(['admin.mjs', 'admin.sources']);
  });

  it('where .build cannot be made (a read-only package directory), the sources run through tsx', async () => {
    const copy = makeCopy();
    // As root, a read-only directory is still writable; a file where the directory would go is not.
    fs.writeFileSync(copy.buildDir, 'not a directory');
    await expectVersion(copy);
    expect(fs.readFileSync(copy.buildDir, 'utf8')).toBe('not a directory');
  });
});
