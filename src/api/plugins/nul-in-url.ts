import { AppError } from '../../errors.ts';

const ENCODED_NUL = /%00/i;

/**
 * No path segment or query value may carry U+0000 (no database column or process argument can
 * hold it). The error names where it stands: `path`, or the query parameter holding it.
 */
export function nulInUrlError(url: string): AppError | undefined {
  if (!ENCODED_NUL.test(url)) return undefined;
  const q = url.indexOf('?');
  let field = 'path';
  if (q >= 0 && !ENCODED_NUL.test(url.slice(0, q))) {
    const parameter = [...new URLSearchParams(url.slice(q + 1))].find(([name, value]) => name.includes('\0') || value.includes('\0'));
    field = parameter && !parameter[0].includes('\0') ? parameter[0] : 'query';
  }
  const message = 'may not contain %00 (the character U+0000)';
  return new AppError('VALIDATION_FAILED', `${field}: ${message}`, { details: [{ field, message }] });
}
