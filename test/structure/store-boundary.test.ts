import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
  });
}

/** Lines of src/ outside src/store/ that match, as `file:line: text`. */
function outsideStore(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (file.startsWith(path.join(SRC, 'store') + path.sep)) continue;
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
      if (pattern.test(line)) found.push(`${path.relative(SRC, file)}:${index + 1}: ${line.trim()}`);
    });
  }
  return found;
}

// docs/design.md "The store hides the dialect".
describe('the store hides the database', () => {
  it('no code outside src/store/ asks which database it runs on', () => {
    expect(outsideStore(/\bstore\.kind\b|\bdialectOf\(/)).toEqual([]);
  });

  it('no code outside src/store/ matches a driver error code for a unique violation, or opens a LISTEN connection', () => {
    expect(outsideStore(/'23505'|SQLITE_CONSTRAINT|\blisten\s+\$\{|new pg\.Client\(/)).toEqual([]);
  });
});
