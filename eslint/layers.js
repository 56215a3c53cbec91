// The layering of docs/design.md "Rooms", checked on every relative import: an arrow may only
// point down (api/cli/mcp → domain → events → store → protocol), runner/ and domain/ meet only
// in agents/, git/, net/ and protocol/, and nothing below api/ imports api/. A new room must be added
// here, or every import into or out of it is reported.
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '..', 'src');
const WEB = path.resolve(import.meta.dirname, '..', 'web');

/** What each room of src/ may import besides itself and the kernel files. */
export const ALLOWED = {
  protocol: [],
  /** Network address rules shared by the server and runners (address guard, host patterns). */
  net: [],
  client: ['protocol'],
  store: ['protocol'],
  events: ['store', 'protocol'],
  agents: ['protocol'],
  git: ['protocol'],
  domain: ['events', 'store', 'protocol', 'agents', 'git', 'net'],
  runner: ['agents', 'git', 'protocol', 'client', 'net'],
  gateway: ['domain', 'events', 'store', 'protocol', 'agents', 'git', 'net'],
  scheduler: ['domain', 'events', 'store', 'protocol', 'agents', 'git', 'net'],
  api: ['gateway', 'domain', 'events', 'store', 'protocol', 'agents', 'git', 'net'],
  mcp: ['client', 'domain', 'events', 'store', 'protocol', 'agents', 'git', 'net'],
  cli: ['client', 'runner', 'domain', 'events', 'store', 'protocol', 'agents', 'git', 'net'],
};

/** Files at the top of src/ that everything may use; they import only each other and protocol/. */
export const KERNEL = new Set(['errors.ts', 'logger.ts', 'paths.ts', 'metrics.ts', 'data-dir.ts']);

/** The room of a file: a folder of src/, `kernel`, `root` (the composition root: main, config, app, serve/), `web`, or null outside. */
export function roomOf(file) {
  const resolved = path.resolve(file);
  if (resolved === WEB || resolved.startsWith(WEB + path.sep)) return 'web';
  if (!resolved.startsWith(SRC + path.sep)) return null;
  const parts = path.relative(SRC, resolved).split(path.sep);
  if (parts.length === 1) return KERNEL.has(parts[0]) ? 'kernel' : 'root';
  if (parts[0] === 'serve') return 'root';
  return parts[0];
}

/** Why `from` may not import `to`, or null when it may. */
export function violation(from, to) {
  if (from === null || to === null || from === to || from === 'root') return null;
  // The dashboard shares the vocabulary (protocol/) and the generated API types (client/) with the
  // server and the CLI (docs/dashboard.md "How the assets are built and served").
  if (from === 'web') return to === 'protocol' || to === 'client' ? null : `the dashboard may import only web/, src/protocol/ and src/client/, not ${to}/`;
  if (to === 'web') return 'src/ does not import the dashboard (web/)';
  if (to === 'root') return 'only the composition root (main, config, app, serve/) imports the composition root';
  if (to === 'kernel') return null;
  if (from === 'kernel') return to === 'protocol' ? null : `the kernel files import only each other and protocol/, not ${to}/`;
  const allowed = ALLOWED[from];
  if (!allowed) return `${from}/ is not a known room: add it to eslint/layers.js`;
  if (allowed.includes(to)) return null;
  if (!(to in ALLOWED)) return `${to}/ is not a known room: add it to eslint/layers.js`;
  if (to === 'api') return 'nothing below api/ imports api/';
  if ((from === 'runner' && to === 'domain') || (from === 'domain' && to === 'runner'))
    return 'runner/ and domain/ do not import each other: share agents/, git/, net/ or protocol/';
  return `an arrow up the layers: ${from}/ may import ${allowed.join(', ') || 'nothing outside itself'}`;
}

export const layersRule = {
  meta: { type: 'problem', docs: { description: 'Imports point down the layers (docs/design.md "Rooms")' }, schema: [] },
  create(context) {
    const file = context.filename;
    const from = roomOf(file);
    if (from === null) return {};
    const check = (node, source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source.value);
      const reason = violation(from, roomOf(target));
      if (reason) context.report({ node: source, message: `${source.value}: ${reason}` });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source : null),
    };
  },
};

export default { rules: { layers: layersRule } };
