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
const ENTRY = path.join(SOURCES, 'main.ts');
const BUILD_DIR = path.join(ROOT, '.build');
const BUNDLE = path.join(BUILD_DIR, 'main.mjs');
/** Names the sources a bundle was built from. */
const STAMP = path.join(BUILD_DIR, 'main.sources');

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
 * The file URL of the module to run: an up-to-date bundle of src/main.ts in <package>/.build (one
 * level below the package root like src/, which src/paths.ts relies on), or, when the package
 * directory is read-only and its bundle is missing or stale, src/main.ts itself through tsx.
 */
export async function entryModule() {
  const digest = sourcesDigest();
  const current = fs.existsSync(BUNDLE) && fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === digest;
  if (current) return pathToFileURL(BUNDLE).href;
  if (!writable(BUILD_DIR)) {
    const { register } = await import('tsx/esm/api');
    register();
    return pathToFileURL(ENTRY).href;
  }
  const { build, stop } = await import('esbuild');
  // Written next to the target and renamed over it: processes starting together never see half a
  // file. The stamp goes last, so a bundle is only taken for current once it is complete.
  const suffix = `${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  await build({
    entryPoints: [ENTRY],
    outfile: `${BUNDLE}.${suffix}`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    logLevel: 'error',
  }).finally(() => stop()); // esbuild's service process would otherwise live as long as drover
  fs.renameSync(`${BUNDLE}.${suffix}`, BUNDLE);
  fs.writeFileSync(`${STAMP}.${suffix}`, digest);
  fs.renameSync(`${STAMP}.${suffix}`, STAMP);
  return pathToFileURL(BUNDLE).href;
}
