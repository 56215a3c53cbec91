import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { docCitations, headingKey, headingNames, parseCitation } from './doc-citations.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mjs|js|css)$/.test(entry.name) ? [full] : [];
  });
}

/** The files whose comments are checked: all code of the repository but this check's own examples. */
const SELF = [path.join(ROOT, 'test/structure/citations.test.ts'), path.join(ROOT, 'test/structure/doc-citations.ts')];
const CODE = (): string[] =>
  ['src', 'web', 'test', 'bench', 'scripts', 'bin', 'eslint'].flatMap((dir) => sourceFiles(path.join(ROOT, dir))).filter((file) => !SELF.includes(file));

/** What a comment or text of the code cites, each as `file:line: reference`. */
function citations(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of CODE()) {
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
      for (const match of line.matchAll(pattern)) found.push(`${path.relative(ROOT, file)}:${index + 1}: ${match[0]}`);
    });
  }
  return found;
}

describe('what the code cites, a reader of the repository can follow', () => {
  it('no comment cites the contract (a document the repository does not hold): the decisions are in docs/', () => {
    expect(citations(/contract\s*§\s*\d+|(?:^|[\s(])§\s*\d+|external-api "/gi)).toEqual([]);
  });

  it('every docs page the code cites exists', () => {
    const cited = citations(/docs\/[\w./-]+\.(?:md|json)/g);
    expect(cited.length).toBeGreaterThan(50);
    const missing = cited.filter((entry) => !fs.existsSync(path.join(ROOT, entry.slice(entry.lastIndexOf(' ') + 1))));
    expect(missing).toEqual([]);
  });

  it('a section citation uses the accepted form (docs/design.md "How code cites docs")', () => {
    const bad = docCitations(ROOT, CODE()).filter((c) => c.badForm).map((c) => `${c.where}: ${c.page}: ${c.badForm}`);
    expect(bad).toEqual([]);
  });

  it('every section the code, README.md and docs/ cite is a heading of that page', () => {
    const pages = fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => path.join(ROOT, 'docs', name));
    const cited = docCitations(ROOT, [...CODE(), path.join(ROOT, 'README.md'), ...pages]).filter((c) => c.sections.length > 0 && c.page.endsWith('.md'));
    expect(cited.length).toBeGreaterThan(50);
    const headings = new Map<string, Set<string>>();
    const missing: string[] = [];
    for (const { where, page, sections } of cited) {
      const file = path.join(ROOT, page);
      if (!fs.existsSync(file)) continue;
      if (!headings.has(page)) headings.set(page, headingNames(fs.readFileSync(file, 'utf8')));
      for (const section of sections) {
        if (!headings.get(page)?.has(headingKey(section))) missing.push(`${where}: ${page} "${section}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every passage the code quotes from a docs page is in that page', () => {
    const quoted = docCitations(ROOT, CODE()).filter((c) => c.quote !== undefined && fs.existsSync(path.join(ROOT, c.page)));
    expect(quoted.length).toBeGreaterThan(0);
    const missing = quoted.filter(({ page, quote }) => !headingKey(fs.readFileSync(path.join(ROOT, page), 'utf8')).includes(headingKey(quote!)));
    expect(missing.map((c) => `${c.where}: ${c.page}: "${c.quote}"`)).toEqual([]);
  });
});

describe('reading a citation', () => {
  const read = (after: string, sameLine = after) => parseCitation('x:1', 'docs/a.md', sameLine, after);

  it('takes the quoted sections after a page', () => {
    expect(read(' "Getting the work back"): text')).toMatchObject({ sections: ['Getting the work back'] });
    expect(read(' "Agent environment", "Autopilot", docs/b.md')).toMatchObject({ sections: ['Agent environment', 'Autopilot'] });
    expect(read('). Prose', ')').badForm).toBeUndefined();
    expect(read(', docs/b.md)').badForm).toBeUndefined();
    expect(read(' leaves the choice').badForm).toBeUndefined();
    expect(read(': "a passage" of it')).toMatchObject({ quote: 'a passage', sections: [] });
  });

  it('refuses the other forms of naming a section', () => {
    for (const after of [', "Errors")', ' § Errors', ', Network walls)', ' Create, docs/b.md', ' `ENV`)', ' "A"; "B")']) {
      expect(read(after).badForm, after).toBeDefined();
    }
  });

  it('matches a heading by its text or its text before a colon, dash or parenthesis, case and punctuation aside', () => {
    const names = headingNames('# Page\n## Results: `result`, `usage`\n### Pods (`pods:read`)\n```\n# not a heading\n```\n');
    for (const cited of ['Results', 'results: result, usage', 'PODS', 'Page']) expect(names.has(headingKey(cited)), cited).toBe(true);
    expect(names.has(headingKey('not a heading'))).toBe(false);
  });
});
