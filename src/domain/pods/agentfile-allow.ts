/**
 * The agentfile's network lines (agentfile.ts): `CONFIG network` and `ALLOW host[:port]`
 * (docs/runners.md "Network").
 */
import { formatHostPattern, parseHostPattern } from '../../net/host-pattern.ts';
import { fail, readValue, show } from './agentfile-syntax.ts';

export const NETWORK_MODES = ['restricted', 'none', 'open'] as const;
export const MAX_ALLOW_LINES = 50;

/** Adds an `ALLOW` line's entry, canonical (`host:port`, `*.domain:port`), to `allow` once. */
export function addAllowLine(allow: string[], arg: string, lineNo: number): void {
  const { value } = readValue(arg, lineNo, 'ALLOW');
  const parsed = parseHostPattern(value);
  if (typeof parsed === 'string') fail(lineNo, `ALLOW ${show(value)} ${parsed} (expected host[:port] or *.domain[:port])`);
  const entry = formatHostPattern(parsed);
  if (!allow.includes(entry)) allow.push(entry);
  if (allow.length > MAX_ALLOW_LINES) fail(lineNo, `at most ${MAX_ALLOW_LINES} ALLOW entries`);
}

export function parseNetworkMode(raw: string, lineNo: number): (typeof NETWORK_MODES)[number] {
  const mode = NETWORK_MODES.find((m) => m === raw);
  return mode ?? fail(lineNo, `CONFIG network must be one of ${NETWORK_MODES.join(', ')}, got ${show(raw)}`);
}
