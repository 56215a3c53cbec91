/**
 * The lexical layer of the agentfile language (agentfile.ts): its error (400 VALIDATION_FAILED
 * naming the line), double-quoted strings with JSON escapes, bare-or-quoted values and bounded
 * integers.
 */
import { AppError } from '../../errors.ts';

const FIELD = 'agentfile_layer';

/** C0 controls and DEL (written as a loop: a regex range over them trips eslint's no-control-regex). */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
export const hasWhitespaceOrControl = (text: string): boolean => /\s/.test(text) || hasControl(text);

/**
 * The parser's error, for callers that find a problem later (an unknown REPO, a foreign
 * channel_id) and want to name the line as docs/agentfile.md asks: `agentfile_layer line N: reason`.
 */
export function agentfileError(line: number | null, reason: string): AppError {
  const message = line === null ? reason : `line ${line}: ${reason}`;
  return new AppError('VALIDATION_FAILED', `${FIELD} ${message}`, { details: [{ field: '/' + FIELD, message }] });
}

export function fail(line: number | null, reason: string): never {
  throw agentfileError(line, reason);
}

/** A user's text quoted for an error message: escaped, and cut short. */
export function show(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/**
 * A double-quoted string at the start of `text` (which starts with `"`), JSON escapes; the
 * quote must close and nothing may follow it. Raw control characters other than tab are refused.
 */
export function parseQuoted(text: string, lineNo: number, what: string): string {
  let out = '';
  let i = 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      if (text.slice(i + 1).trim() !== '') fail(lineNo, `unexpected text after the closing quote of ${what}`);
      return out;
    }
    if (ch === '\\') {
      const esc = text[i + 1];
      if (esc === undefined) fail(lineNo, `unterminated string in ${what} (missing closing ")`);
      switch (esc) {
        case '"':
        case '\\':
        case '/':
          out += esc;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9A-Fa-f]{4}$/.test(hex)) fail(lineNo, `bad \\u escape in ${what} (expected 4 hex digits)`);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          fail(lineNo, `unknown escape ${show('\\' + esc)} in ${what} (use \\" \\\\ \\n \\t or \\uXXXX)`);
      }
      i += 2;
      continue;
    }
    if (ch !== '\t' && hasControl(ch)) fail(lineNo, `raw control character in ${what} (write it as an escape such as \\n)`);
    out += ch;
    i += 1;
  }
  fail(lineNo, `unterminated string in ${what} (missing closing ")`);
}

/** A directive's argument: a quoted string (always a string, marked quoted) or the bare text. */
export function readValue(arg: string, lineNo: number, what: string): { value: string; quoted: boolean } {
  if (arg.startsWith('"')) return { value: parseQuoted(arg, lineNo, what), quoted: true };
  return { value: arg, quoted: false };
}

export function parseInteger(raw: string, lineNo: number, what: string, min: number, max: number): number {
  if (!/^-?[0-9]+$/.test(raw)) fail(lineNo, `${what} must be an integer, got ${show(raw)}`);
  const n = Number(raw);
  if (!(n >= min && n <= max)) fail(lineNo, `${what} must be between ${min} and ${max}, got ${show(raw)}`);
  return n;
}
