// Keeps a bundled JavaScript build of the TypeScript sources in <package>/.build, rebuilt with
// esbuild (~0.1 s) whenever the sources changed, so `npm install` stays the only setup step and no
// TypeScript loader runs in production: the tsx loader thread alone costs a Drover process ~37 MB
// of memory, and every fork of a larger process costs more (see src/runner/launcher-child.mjs).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = path.join(ROOT, 'src');
const BUILD_DIR = path.join(ROOT, '.build');
/**
 * The bundles: `main` (the server, runners, administration) and `cli` (the API client commands,
 * which must start fast: it holds none of Fastify, Kysely, pino or the database drivers).
 */
const ENTRIES = { main: path.join(SOURCES, 'main.ts'), cli: path.join(SOURCES, 'cli', 'client', 'main.ts') };

/**
 * A digest of everything the bundle is made from: the sources, package.json (inlined for
 * `--version`) and this script. Contents, not modification times: files unpacked with old or
 * future timestamps, or saved during a build, must not keep an old bundle or rebuild forever.
 */
function sourcesDigest() {
  const hash = crypto.createHash('sha256');
  const add = (file) => hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mjs|json)$/.test(entry.name)) add(full);
    }
  };
  walk(SOURCES);
  add(path.join(ROOT, 'package.json'));
  add(fileURLToPath(import.meta.url));
  return hash.digest('hex');
}

function writable(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The file URL of the module to run for `entry` ("main" or "cli"): an up-to-date bundle of its
 * sources in <package>/.build/<entry>.mjs (one level below the package root like src/, which
 * src/paths.ts relies on), or, when the package directory is read-only and its bundle is missing or
 * stale, the TypeScript entry itself through tsx.
 */
export async function entryModule(entry = 'main') {
  const source = ENTRIES[entry];
  if (!source) throw new Error(`no bundle entry "${entry}"`);
  const bundle = path.join(BUILD_DIR, `${entry}.mjs`);
  /** Names the sources a bundle was built from. */
  const stamp = path.join(BUILD_DIR, `${entry}.sources`);
  const digest = sourcesDigest();
  const current = fs.existsSync(bundle) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === digest;
  if (current) return pathToFileURL(bundle).href;
  if (!writable(BUILD_DIR)) {
    const { register } = await import('tsx/esm/api');
    register();
    return pathToFileURL(source).href;
  }
  const { build, stop } = await import('esbuild');
  // Written next to the target and renamed over it: processes starting together never see half a
  // file. The stamp goes last, so a bundle is only taken for current once it is complete.
  const suffix = `${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  await build({
    entryPoints: [source],
    outfile: `${bundle}.${suffix}`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    logLevel: 'error',
  }).finally(() => stop()); // esbuild's service process would otherwise live as long as drover
  fs.renameSync(`${bundle}.${suffix}`, bundle);
  fs.writeFileSync(`${stamp}.${suffix}`, digest);
  fs.renameSync(`${stamp}.${suffix}`, stamp);
  return pathToFileURL(bundle).href;
}
