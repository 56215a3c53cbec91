import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mjs|js|css)$/.test(entry.name) ? [full] : [];
  });
}

/** What a comment or text of src/ and web/ cites, each as `file:line: reference`. */
function citations(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'web'))]) {
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
      for (const match of line.matchAll(pattern)) found.push(`${path.relative(ROOT, file)}:${index + 1}: ${match[0]}`);
    });
  }
  return found;
}

describe('what the code cites, a reader of the repository can follow', () => {
  it('no comment cites the contract (a document the repository does not hold): the decisions are in docs/', () => {
    expect(citations(/contract\s*§\s*\d+|(?:^|[\s(])§\s*\d+/gi)).toEqual([]);
  });

  it('every docs page the code cites exists', () => {
    const cited = citations(/docs\/[\w./-]+\.(?:md|json)/g);
    expect(cited.length).toBeGreaterThan(50);
    const missing = cited.filter((entry) => !fs.existsSync(path.join(ROOT, entry.slice(entry.lastIndexOf(' ') + 1))));
    expect(missing).toEqual([]);
  });
});
