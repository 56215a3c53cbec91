import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from '../../errors.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** How deep objects and arrays may nest in a body (the body itself is level 1). */
export const MAX_JSON_DEPTH = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The only body format: JSON objects, strictly UTF-8. Every other content type is 415
 * (Fastify's default for unregistered types); an empty body is treated as absent.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, raw, done) => {
    const buffer = raw as Buffer;
    if (buffer.length === 0) return done(null, undefined);
    let text: string;
    try {
      text = utf8.decode(buffer);
    } catch {
      return done(new AppError('INVALID_JSON', 'request body is not valid UTF-8'), undefined);
    }
    let value: unknown;
    try {
      value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      return done(new AppError('INVALID_JSON', `request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
    // Checked before anything walks the value: code that recurses over it (the NUL search below,
    // JSON.stringify for idempotency fingerprints) would overflow the stack on a 1 MiB body.
    if (jsonDeeperThan(text, MAX_JSON_DEPTH)) {
      const at = pointerDeeperThan(value, MAX_JSON_DEPTH, '', 1) ?? '/';
      const message = `objects and arrays may not nest more than ${MAX_JSON_DEPTH} levels deep`;
      return done(new AppError('VALIDATION_FAILED', `request body: ${message}`, { details: [{ field: at, message }] }), undefined);
    }
    // JSON escapes can smuggle U+0000 into strings; no database column or process argument can hold it.
    const nulAt = text.includes('\\u0000') ? pointerToNul(value, '') : undefined;
    if (nulAt !== undefined) {
      const message = 'strings may not contain the character U+0000';
      return done(
        new AppError('VALIDATION_FAILED', `${nulAt.slice(1) || 'request body'}: ${message}`, { details: [{ field: nulAt || '/', message }] }),
        undefined,
      );
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return done(
        new AppError('VALIDATION_FAILED', 'request body must be a JSON object', {
          details: [{ field: '/', message: 'request body must be a JSON object' }],
        }),
        undefined,
      );
    }
    done(null, value);
  });
}

/**
 * Whether valid JSON text nests objects/arrays more than `max` levels deep: one pass over the
 * characters, no recursion, no allocation.
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote, stepping over escapes
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

const escapePointer = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The JSON pointer of the first object or array at level `max + 1` (recursing at most that deep). */
function pointerDeeperThan(value: unknown, max: number, at: string, depth: number): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > max) return at;
  for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const found = pointerDeeperThan(item, max, `${at}/${escapePointer(String(key))}`, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The JSON pointer (RFC 6901) of the first string or key holding a NUL, or undefined if none does. */
function pointerToNul(value: unknown, at: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? at : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const here = `${at}/${escapePointer(String(key))}`;
    if (typeof key === 'string' && key.includes('\0')) return here;
    const found = pointerToNul(item, here);
    if (found !== undefined) return found;
  }
  return undefined;
}
