import fs from 'node:fs';
import path from 'node:path';

/**
 * How code cites docs (docs/design.md "How code cites docs"): a page, `docs/page.md`, or sections
 * of it, `docs/page.md "Heading"` or `docs/page.md "Heading", "Other heading"`, the heading's text
 * in double quotes one space after the page. A heading may be cited by its whole text or by its
 * text before the first `:`, ` — ` or ` (`; case and punctuation do not count. A passage quoted from
 * a page, `docs/page.md: "words of the page"`, is in that page.
 */

/** One reference to a docs page found in a file: where, the page, the sections it names, a wrong form. */
export interface DocCitation {
  where: string;
  page: string;
  sections: string[];
  /** A passage the citation quotes from the page (`docs/page.md: "…"`). */
  quote?: string;
  /** Set when text after the page names a section in a form other than the accepted one. */
  badForm?: string;
}

const PAGE = /docs\/[\w./-]+\.(?:md|json)/g;
/** A comment's or JSX text's continuation marker at the start of a line. */
const CONTINUATION = /^\s*(?:\/\/+|\/?\*+(?!\/)|\{\/\*)?\s*/;

/** The rest of line `index` after `column`, joined with the next lines (without their comment markers). */
function tail(lines: string[], index: number, column: number): string {
  let text = lines[index].slice(column);
  for (let next = index + 1; next < Math.min(lines.length, index + 3); next++) {
    text += ` ${lines[next].replace(CONTINUATION, '')}`;
  }
  return text.replace(/\s+/g, ' ');
}

/** The citation starting right after a page reference, given the text that follows it. */
export function parseCitation(where: string, page: string, sameLine: string, following: string): DocCitation {
  const citation: DocCitation = { where, page, sections: [] };
  const passage = /^: "([^"]+)"/.exec(following);
  if (passage) return { ...citation, quote: passage[1] };
  const quoted = /^ "([^"]+)"/.exec(following);
  if (quoted) {
    let rest = following;
    for (let m = /^(?:,)? "([^"]+)"/.exec(rest); m; m = /^, "([^"]+)"/.exec(rest)) {
      citation.sections.push(m[1]);
      rest = rest.slice(m[0].length);
    }
    if (/^\s*;\s*"/.test(rest)) citation.badForm = `sections joined by ";": write docs/page.md "A", "B"`;
    return citation;
  }
  if (/^,\s*"/.test(following)) citation.badForm = 'a comma between the page and its quoted section';
  else if (/^[,\s]*§/.test(following)) citation.badForm = '"§" before a section';
  else if (/^,\s*(?!docs\/)[^\s)]/.test(following)) citation.badForm = 'text after "page, " (a section without quotes?)';
  else if (/^ [A-Z`]/.test(sameLine)) citation.badForm = 'a section name without quotes';
  return citation;
}

/** Every reference to a docs page in these files, as `DocCitation`s. */
export function docCitations(root: string, files: string[]): DocCitation[] {
  const found: DocCitation[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, index) => {
      for (const match of line.matchAll(PAGE)) {
        const column = match.index + match[0].length;
        const where = `${path.relative(root, file)}:${index + 1}`;
        found.push(parseCitation(where, match[0], line.slice(column), tail(lines, index, column)));
      }
    });
  }
  return found;
}

/** A heading's text, case and punctuation aside. */
export function headingKey(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** The names a page's headings (any level, outside code blocks) may be cited by. */
export function headingNames(markdown: string): Set<string> {
  const names = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    names.add(headingKey(heading[1]));
    const short = /^(.+?)(?::\s| — | \()/.exec(heading[1]);
    if (short) names.add(headingKey(short[1]));
  }
  return names;
}
