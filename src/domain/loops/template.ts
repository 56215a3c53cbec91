import { AppError } from '../../errors.ts';

/**
 * Prompt templates of loops (docs/api.md "Prompt templates"). The same functions render manual and cron
 * triggers.
 *
 * Syntax:
 * - A placeholder is `{{name}}`; spaces and tabs may surround the name (`{{ name }}`). A name is
 *   `[A-Za-z_][A-Za-z0-9_.-]*`, so `{{repo.name}}` and `{{ticket-id}}` are single names (the dot
 *   is part of the name: values are looked up flat, `values["repo.name"]`, never as a path).
 * - Anything else between double braces is literal text, copied unchanged: `{{ }}`, `{{ 1x }}`,
 *   `{{a b}}`, `{{.Values}}`, a placeholder split over lines, unbalanced braces.
 * - Escape: a backslash directly before a placeholder makes it literal and is itself dropped:
 *   `\{{name}}` renders as `{{name}}` and needs no value (for prompts that quote GitHub Actions'
 *   `${{ secrets.X }}`, Jinja or Handlebars). A backslash anywhere else is ordinary text. Literal
 *   text can also always come in through a value, because values are never expanded again.
 *
 * Rendering is one left-to-right pass over the template (linear time: the pattern has no nested
 * quantifiers and every attempt stops at the first character that is not a space, tab or name
 * character, so attempts never rescan each other's text). A value is inserted as it is, even if it
 * contains `{{x}}`: values cannot inject placeholders.
 */
const PLACEHOLDER = /(\\?)\{\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}\}/g;

/** The placeholder names of a template, deduplicated, in order of first appearance (escaped ones excluded). */
export function templateVariables(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER)) if (match[1] === '') names.add(match[2]);
  return [...names];
}

/** How a value appears in the prompt: strings as they are, anything else as (compact) JSON; null is "null". */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  // JSON.stringify yields undefined for functions and symbols, which JSON input never holds.
  return JSON.stringify(value) ?? String(value);
}

/**
 * Fills every placeholder that has a value. A placeholder whose name is not an own key of
 * `values`, or whose value is `undefined`, stays in the text as written and its name is listed in
 * `missing` (deduplicated, in order of first appearance). `null` is a value.
 */
export function renderTemplate(template: string, values: Record<string, unknown>): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const text = template.replace(PLACEHOLDER, (whole: string, escape: string, name: string) => {
    if (escape !== '') return whole.slice(1);
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (value === undefined) {
      missing.add(name);
      return whole;
    }
    return renderValue(value);
  });
  return { text, missing: [...missing] };
}

/** The 400 for placeholders left without a value; a cron firing stores its `message` on the failed run. */
export function missingVariablesError(missing: readonly string[]): AppError {
  const message = `missing values for template variables: ${missing.join(', ')}`;
  return new AppError('VALIDATION_FAILED', message, { details: [{ field: '/variables', message }] });
}

/**
 * Renders with `overrides` (a trigger's `variables`) merged over `defaults` (the loop's
 * `prompt_variables`); throws VALIDATION_FAILED naming every placeholder left without a value.
 */
export function renderOrThrow(template: string, defaults: Record<string, unknown>, overrides: Record<string, unknown> | undefined): string {
  const { text, missing } = renderTemplate(template, { ...defaults, ...overrides });
  if (missing.length > 0) throw missingVariablesError(missing);
  return text;
}
