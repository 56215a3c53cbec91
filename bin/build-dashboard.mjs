// Builds the web dashboard (docs/dashboard.md) from its sources in <package>/web with esbuild, the way
// ./build.mjs builds the server: kept in <package>/.build/dashboard.{js,css} with a stamp of the
// sources' contents, rebuilt only when they changed. `drover serve` calls dashboardAssets() at start
// (unless DROVER_DASHBOARD=false) and serves the files from memory; no second server, no CDN.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Buffer } from 'node:buffer';
import { BUILD_DIR, ROOT, contentsDigest, readStamp, replace, sameStats, statsOf, writable } from './build.mjs';

const WEB = path.join(ROOT, 'web');
const ENTRY = path.join(WEB, 'src', 'main.tsx');
const OUTPUTS = { js: path.join(BUILD_DIR, 'dashboard.js'), css: path.join(BUILD_DIR, 'dashboard.css') };
const STAMP = path.join(BUILD_DIR, 'dashboard.sources');

/** The dashboard's sources, the protocol module it shares with the server, this script, and the lock file (Preact is bundled in). */
function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|tsx|css|json)$/.test(entry.name)) files.push(full);
    }
  };
  walk(path.join(WEB, 'src'));
  // The dashboard bundles the shared vocabulary (statuses, scopes, the transcript's shape) from the server's protocol room.
  walk(path.join(ROOT, 'src', 'protocol'));
  for (const file of [path.join(ROOT, 'package-lock.json'), fileURLToPath(import.meta.url)]) if (fs.existsSync(file)) files.push(file);
  return files;
}

/** One esbuild run: the browser bundle (minified, ES2020) and its stylesheet, in memory. */
async function bundle() {
  const { build, stop } = await import('esbuild');
  try {
    const result = await build({
      entryPoints: [ENTRY],
      bundle: true,
      write: false,
      outdir: BUILD_DIR,
      entryNames: 'dashboard',
      platform: 'browser',
      format: 'iife',
      target: 'es2020',
      minify: true,
      jsx: 'automatic',
      jsxImportSource: 'preact',
      legalComments: 'none',
      logLevel: 'error',
    });
    const pick = (ext) => result.outputFiles.find((file) => file.path.endsWith(ext))?.contents ?? new Uint8Array();
    return { js: Buffer.from(pick('.js')), css: Buffer.from(pick('.css')) };
  } finally {
    await stop();
  }
}

/**
 * The dashboard's JavaScript and CSS as Buffers: from .build when its stamp matches the sources,
 * else built now (and kept in .build when it is writable).
 */
export async function dashboardAssets() {
  const files = sourceFiles();
  const stats = statsOf(files);
  const present = fs.existsSync(OUTPUTS.js) && fs.existsSync(OUTPUTS.css);
  const stamp = present ? readStamp(STAMP) : null;
  const read = () => ({ js: fs.readFileSync(OUTPUTS.js), css: fs.readFileSync(OUTPUTS.css) });
  if (stamp && sameStats(stamp.stats, stats)) return read();
  const digest = await contentsDigest(files);
  const canWrite = writable(BUILD_DIR);
  const suffix = `${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  if (stamp && stamp.digest === digest) {
    if (canWrite) replace(STAMP, JSON.stringify({ digest, stats }), suffix);
    return read();
  }
  const built = await bundle();
  if (canWrite) {
    replace(OUTPUTS.js, built.js, suffix);
    replace(OUTPUTS.css, built.css, suffix);
    replace(STAMP, JSON.stringify({ digest, stats }), suffix);
  }
  return built;
}
