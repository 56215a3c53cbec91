import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root directory. This module sits one level below it both as a source file
 * (src/paths.ts) and inside the bundle `drover` runs (.build/main.mjs, see bin/build.mjs).
 */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A file of the package, by its path from the root (e.g. the plain-JavaScript helpers under src/). */
export const packageFile = (relative: string): string => path.join(PACKAGE_ROOT, relative);
