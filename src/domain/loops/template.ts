import { AppError } from '../../errors.ts';

/**
 * `{{name}}` placeholders (spaces allowed inside the braces). Names are letters, digits, `_`, `.`
 * and `-`, starting with a letter or `_`; anything else between braces stays literal text.
 */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** The placeholder names of a template, in order of first appearance. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/**
 * One pass over the template: a value that itself contains `{{x}}` is inserted as it is, never
 * expanded again. Strings go in as they are; other values as JSON (null is a value: "null").
 */
export function renderTemplate(template: string, values: Record<string, unknown>): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const text = template.replace(PLACEHOLDER, (whole, name: string) => {
    if (!Object.hasOwn(values, name) || values[name] === undefined) {
      missing.add(name);
      return whole;
    }
    const value = values[name];
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
  return { text, missing: [...missing] };
}

/** Trigger values override the loop's defaults; any placeholder left without a value is a 400 listing them. */
export function renderOrThrow(template: string, defaults: Record<string, unknown>, overrides: Record<string, unknown> | undefined): string {
  const { text, missing } = renderTemplate(template, { ...defaults, ...(overrides ?? {}) });
  if (missing.length > 0) {
    const message = `missing values for template variables: ${missing.join(', ')}`;
    throw new AppError('VALIDATION_FAILED', message, { details: [{ field: '/variables', message }] });
  }
  return text;
}
