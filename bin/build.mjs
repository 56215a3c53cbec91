// Keeps a bundled JavaScript build of the TypeScript sources in <package>/.build, rebuilt with
// esbuild (~0.1 s) whenever a source file is newer, so `npm install` stays the only setup step
// and no TypeScript loader runs in production: the tsx loader thread alone costs a Drover process
// ~37 MB of memory, and every fork of a larger process costs more (see src/runner/launcher-child.mjs).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = path.join(ROOT, 'src');
const ENTRY = path.join(SOURCES, 'main.ts');

/** The newest modification time among the sources (and this build script). */
function newestSource() {
  let newest = fs.statSync(fileURLToPath(import.meta.url)).mtimeMs;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mjs)$/.test(entry.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  };
  walk(SOURCES);
  return newest;
}

function writableDir(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of an up-to-date bundle of src/main.ts. It lives in <package>/.build, one level below
 * the package root like src/ (src/paths.ts relies on that), or, when the package directory is
 * read-only, in a temporary directory named after it.
 */
export async function ensureBuilt() {
  let dir = path.join(ROOT, '.build');
  if (!writableDir(dir)) {
    dir = path.join(os.tmpdir(), `drover-build-${crypto.createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`, '.build');
    fs.mkdirSync(dir, { recursive: true });
  }
  const out = path.join(dir, 'main.mjs');
  const built = fs.existsSync(out) ? fs.statSync(out).mtimeMs : 0;
  if (built >= newestSource()) return out;
  const { build } = await import('esbuild');
  // Written next to the target and renamed over it: processes starting together never see half a file.
  const temporary = `${out}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  await build({
    entryPoints: [ENTRY],
    outfile: temporary,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    logLevel: 'error',
  });
  fs.renameSync(temporary, out);
  return out;
}
