/**
 * Markdown for channel messages and documents, safe by construction: the text is turned into Preact
 * elements (never HTML strings), so nothing in a message can add markup or script. A small subset:
 * paragraphs, headings, `-`/`*`/`1.` lists, fenced code, `inline code`, **bold**, *italic*,
 * [links](https://…) and bare http(s) URLs; a link goes only to http, https or mailto.
 */
import type { ComponentChildren, VNode } from 'preact';

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
// One inline token: code, a [text](url) link, a bare URL, **bold**, *italic*.
const INLINE = /(`[^`\n]+`)|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])|\*\*([^*\n]+)\*\*|\*([^*\n]+)\*/g;

function link(url: string, children: ComponentChildren): VNode | string {
  if (!SAFE_URL.test(url)) return typeof children === 'string' ? children : url;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  );
}

export function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index! > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(<code>{m[1].slice(1, -1)}</code>);
    else if (m[2]) out.push(link(m[3], m[2]));
    else if (m[4]) out.push(link(m[4], m[4]));
    else if (m[5]) out.push(<strong>{m[5]}</strong>);
    else if (m[6]) out.push(<em>{m[6]}</em>);
    last = m.index! + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const withBreaks = (lines: string[]): ComponentChildren[] => lines.flatMap((l, i) => (i ? [<br />, ...inline(l)] : inline(l)));

export function Markdown({ text }: { text: string }) {
  const blocks: VNode[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) body.push(lines[i]);
      i++;
      blocks.push(<pre class="md-code">{body.join('\n')}</pre>);
    } else if (/^#{1,6} /.test(line)) {
      blocks.push(<p class="md-heading">{inline(line.replace(/^#+ /, ''))}</p>);
      i++;
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.) /.test(lines[i]); i++) items.push(lines[i].replace(/^\s*([-*]|\d+\.) /, ''));
      const children = items.map((item) => <li>{inline(item)}</li>);
      blocks.push(ordered ? <ol>{children}</ol> : <ul>{children}</ul>);
    } else if (!line.trim()) {
      i++;
    } else {
      const para: string[] = [];
      for (; i < lines.length && lines[i].trim() && !/^(```|#{1,6} |\s*([-*]|\d+\.) )/.test(lines[i]); i++) para.push(lines[i]);
      blocks.push(<p>{withBreaks(para)}</p>);
    }
  }
  return <div class="md">{blocks}</div>;
}
