// Keeps bundled JavaScript builds of the TypeScript sources in <package>/.build, rebuilt with
// esbuild (~0.1 s) whenever the sources changed, so `npm install` stays the only setup step and no
// TypeScript loader runs in production: the tsx loader thread alone costs a Drover process ~37 MB
// of memory, and every fork of a larger process costs more (see src/runner/launcher-child.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = path.join(ROOT, 'src');
export const BUILD_DIR = path.join(ROOT, '.build');
const THIS_FILE = fileURLToPath(import.meta.url);

/**
 * The bundles: `main` (the server, runners, administration; packages stay in node_modules),
 * `cli` (the API client commands, which must start fast: none of Fastify, Kysely, pino or the
 * database drivers, and its two small packages inlined so that nothing is resolved at start),
 * `mcp` (`drover mcp`, likewise small and self-contained) and `admin` (`drover admin`, likewise).
 */
const ENTRIES = {
  main: { source: path.join(SOURCES, 'main.ts'), packages: 'external' },
  cli: { source: path.join(SOURCES, 'cli', 'client', 'main.ts'), packages: undefined },
  // `drover mcp`, which agents start for every session: the MCP SDK, zod and the typed client inlined.
  mcp: { source: path.join(SOURCES, 'mcp', 'main.ts'), packages: undefined },
  // `drover admin`: calls to the admin API, none of the server.
  admin: { source: path.join(SOURCES, 'cli', 'admin-main.ts'), packages: undefined },
};

/** Everything a bundle is made from: the sources, package.json (inlined for `--version`), the lock file (inlined packages) and this script. */
function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mjs|json)$/.test(entry.name)) files.push(full);
    }
  };
  walk(SOURCES);
  for (const file of [path.join(ROOT, 'package.json'), path.join(ROOT, 'package-lock.json'), THIS_FILE]) if (fs.existsSync(file)) files.push(file);
  return files;
}

/**
 * What the file system says of each file: size, modification and change time. ctime cannot be set
 * back (any write or rename moves it), so equal stats mean equal contents; unequal stats prove
 * nothing (a touch, a checkout of the same text), and then the contents decide.
 */
export function statsOf(files) {
  return Object.fromEntries(
    files.map((file) => {
      const s = fs.statSync(file);
      return [path.relative(ROOT, file), `${s.size}:${s.mtimeMs}:${s.ctimeMs}`];
    }),
  );
}

/**
 * A digest of the files' contents: files unpacked with old or future timestamps, or saved during
 * a build, must not keep an old bundle or rebuild forever.
 */
export async function contentsDigest(files) {
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256');
  for (const file of files) hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export function readStamp(file) {
  try {
    const stamp = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof stamp?.digest === 'string' && typeof stamp.stats === 'object' ? stamp : null;
  } catch {
    return null;
  }
}

export const sameStats = (a, b) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
};

/** Written next to the target and renamed over it: processes starting together never see half a file. */
export function replace(file, contents, suffix) {
  fs.writeFileSync(`${file}.${suffix}`, contents);
  fs.renameSync(`${file}.${suffix}`, file);
}

export function writable(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The file URL of the module to run for `entry` ("main", "cli", "mcp" or "admin"): an up-to-date bundle of its
 * sources in <package>/.build/<entry>.mjs (one level below the package root like src/, which
 * src/paths.ts relies on), or, when the package directory is read-only and its bundle is missing or
 * stale, the TypeScript entry itself through tsx.
 *
 * The stamp <entry>.sources names the contents the bundle was built from, with the files' stats:
 * a start whose files all have the recorded stats reads no file (the common case, a few ms); one
 * with other stats hashes the contents and rebuilds only if they changed.
 */
export async function entryModule(entry = 'main') {
  const spec = ENTRIES[entry];
  if (!spec) throw new Error(`no bundle entry "${entry}"`);
  const bundle = path.join(BUILD_DIR, `${entry}.mjs`);
  const stampFile = path.join(BUILD_DIR, `${entry}.sources`);
  const files = sourceFiles();
  const stats = statsOf(files);
  const stamp = fs.existsSync(bundle) ? readStamp(stampFile) : null;
  if (stamp && sameStats(stamp.stats, stats)) return pathToFileURL(bundle).href;
  const digest = await contentsDigest(files);
  const canWrite = writable(BUILD_DIR);
  const suffix = `${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  if (stamp && stamp.digest === digest) {
    // Same contents, other stats (touched, checked out again): remember them, keep the bundle.
    if (canWrite) replace(stampFile, JSON.stringify({ digest, stats }), suffix);
    return pathToFileURL(bundle).href;
  }
  if (!canWrite) {
    const { register } = await import('tsx/esm/api');
    register();
    return pathToFileURL(spec.source).href;
  }
  const { build, stop } = await import('esbuild');
  await build({
    entryPoints: [spec.source],
    outfile: `${bundle}.${suffix}`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: spec.packages,
    keepNames: true,
    logLevel: 'error',
  }).finally(() => stop()); // esbuild's service process would otherwise live as long as drover
  fs.renameSync(`${bundle}.${suffix}`, bundle);
  // The stamp goes last, so a bundle is only taken for current once it is complete.
  replace(stampFile, JSON.stringify({ digest, stats }), suffix);
  return pathToFileURL(bundle).href;
}
