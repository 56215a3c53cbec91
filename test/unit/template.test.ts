import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { missingVariablesError, renderOrThrow, renderTemplate, renderValue, templateVariables } from '../../src/domain/loops/template.ts';
import { AppError } from '../../src/errors.ts';

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an AppError');
}

describe('templateVariables', () => {
  it('lists names in order of first appearance, deduplicated', () => {
    expect(templateVariables('{{b}} and {{ a }} then {{b}} and {{\tc\t}} and {{ a}}')).toEqual(['b', 'a', 'c']);
  });

  it('accepts letters, digits, _, . and - after a letter or _', () => {
    expect(templateVariables('{{_x}} {{repo.name}} {{ticket-id}} {{A9}} {{a.b-c_d}}')).toEqual(['_x', 'repo.name', 'ticket-id', 'A9', 'a.b-c_d']);
  });

  it('leaves anything else between braces as literal text', () => {
    for (const text of ['{{ }}', '{{}}', '{{ 1x }}', '{{1}}', '{{a b}}', '{{.Values.x}}', '{{-a}}', '{{ a', 'a }}', '{a}', '{{a}', '{{\na\n}}', '{{a!}}', '{{ä}}']) {
      expect(templateVariables(text), text).toEqual([]);
      expect(renderTemplate(text, {}), text).toEqual({ text, missing: [] });
    }
  });

  it('does not list escaped placeholders', () => {
    expect(templateVariables('\\{{a}} {{b}} $\\{{ secrets.TOKEN }}')).toEqual(['b']);
  });

  it('finds the placeholder inside extra braces', () => {
    expect(templateVariables('{{{a}}}')).toEqual(['a']);
    expect(renderTemplate('{{{a}}}', { a: 'x' }).text).toBe('{x}');
  });
});

describe('renderTemplate', () => {
  it('inserts strings as they are and other values as JSON', () => {
    const { text, missing } = renderTemplate('s={{s}} n={{ n }} b={{b}} z={{z}} o={{o}} l={{l}} e={{e}}', {
      s: 'he said "hi"\n',
      n: 42.5,
      b: false,
      z: null,
      o: { a: [1, 'two'], b: { c: null } },
      l: [],
      e: '',
    });
    expect(missing).toEqual([]);
    expect(text).toBe('s=he said "hi"\n n=42.5 b=false z=null o={"a":[1,"two"],"b":{"c":null}} l=[] e=');
  });

  it('lists placeholders without a value, keeps them as written, and treats null as a value', () => {
    const { text, missing } = renderTemplate('{{ a }} {{b}} {{c}} {{a}} {{d}}', { b: null, c: undefined });
    expect(missing).toEqual(['a', 'c', 'd']);
    expect(text).toBe('{{ a }} null {{c}} {{a}} {{d}}');
  });

  it('looks names up flat, not as paths', () => {
    expect(renderTemplate('{{repo.name}}', { repo: { name: 'x' } }).missing).toEqual(['repo.name']);
    expect(renderTemplate('{{repo.name}}', { 'repo.name': 'x' }).text).toBe('x');
  });

  it('only uses own keys: inherited properties are missing', () => {
    const { missing } = renderTemplate('{{constructor}} {{toString}} {{__proto__}} {{hasOwnProperty}}', {});
    expect(missing).toEqual(['constructor', 'toString', '__proto__', 'hasOwnProperty']);
    const values = JSON.parse('{"__proto__": "p", "constructor": 1}') as Record<string, unknown>;
    expect(renderTemplate('{{__proto__}} {{constructor}}', values)).toEqual({ text: 'p 1', missing: [] });
  });

  it('is single-pass: a value containing a placeholder is not expanded again', () => {
    const values = { a: '{{b}}', b: 'SECRET', c: '\\{{b}}', d: '{{ a }}' };
    expect(renderTemplate('{{a}} {{c}} {{d}}', values)).toEqual({ text: '{{b}} \\{{b}} {{ a }}', missing: [] });
    // A value naming a variable that has no value does not make that variable missing.
    expect(renderTemplate('{{a}}', { a: '{{nothing}}' })).toEqual({ text: '{{nothing}}', missing: [] });
    // Nor does a JSON value with braces.
    expect(renderTemplate('{{o}}', { o: { '{{b}}': '{{b}}' } }).text).toBe('{"{{b}}":"{{b}}"}');
  });

  it('does not interpret replacement patterns in values', () => {
    expect(renderTemplate('{{a}}', { a: "$& $1 $$ $` $'" }).text).toBe("$& $1 $$ $` $'");
  });

  it('renders an escaped placeholder literally, without the backslash and without needing a value', () => {
    expect(renderTemplate('use $\\{{ secrets.TOKEN }} for {{repo}}', { repo: 'drover' })).toEqual({
      text: 'use ${{ secrets.TOKEN }} for drover',
      missing: [],
    });
    expect(renderTemplate('\\{{a}}', { a: 'x' }).text).toBe('{{a}}');
    // Other backslashes are ordinary text.
    expect(renderTemplate('a\\b \\{ \\{{ }} \\', {}).text).toBe('a\\b \\{ \\{{ }} \\');
  });

  it('runs in linear time on adversarial input', () => {
    const n = 200_000;
    const inputs = [
      '{{'.repeat(n),
      `{{${' '.repeat(n)}`,
      `{{${'a'.repeat(n)}`,
      `{{a${' '.repeat(n)}}`,
      '{{ a '.repeat(n / 4),
      '\\{{a}'.repeat(n / 5),
      '{{a}}'.repeat(n / 5),
    ];
    for (const input of inputs) {
      const started = performance.now();
      renderTemplate(input, { a: 'x' });
      templateVariables(input);
      expect(performance.now() - started, input.slice(0, 12)).toBeLessThan(500);
    }
  });
});

describe('renderValue', () => {
  it('renders strings raw and everything else as JSON', () => {
    expect(renderValue('x')).toBe('x');
    expect(renderValue(null)).toBe('null');
    expect(renderValue(0)).toBe('0');
    expect(renderValue(true)).toBe('true');
    expect(renderValue({ a: 'b' })).toBe('{"a":"b"}');
  });
});

describe('renderOrThrow', () => {
  it('merges overrides over defaults', () => {
    expect(renderOrThrow('{{a}}-{{b}}-{{c}}', { a: 'A', b: 'B' }, { b: 2, c: 'C' })).toBe('A-2-C');
    expect(renderOrThrow('{{a}}', { a: 'A' }, undefined)).toBe('A');
    expect(renderOrThrow('no placeholders', {}, undefined)).toBe('no placeholders');
  });

  it('lets an override set null', () => {
    expect(renderOrThrow('{{a}}', { a: 'A' }, { a: null })).toBe('null');
  });

  it('throws VALIDATION_FAILED listing every missing name once', () => {
    const error = thrown(() => renderOrThrow('{{a}} {{ b }} {{c}} {{a}}', { c: 1 }, {}));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.status).toBe(400);
    expect(error.message).toBe('missing values for template variables: a, b');
    expect(error.extra.details).toEqual([{ field: '/variables', message: 'missing values for template variables: a, b' }]);
  });

  it('does not take the merged object’s prototype from a "__proto__" key', () => {
    const overrides = JSON.parse('{"__proto__": {"a": "polluted"}}') as Record<string, unknown>;
    expect(thrown(() => renderOrThrow('{{a}}', {}, overrides)).message).toContain(': a');
    expect(renderOrThrow('{{__proto__}}', {}, overrides)).toBe('{"a":"polluted"}');
  });

  it('missingVariablesError builds the same error', () => {
    const error = missingVariablesError(['x', 'y']);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe('missing values for template variables: x, y');
  });
});

describe('properties', () => {
  const nameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/);
  const valueArb = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
  const spaces = fc.constantFrom('', ' ', '  ', '\t', ' \t ');
  // Free text rich in the characters that matter.
  const textArb = fc.string({ unit: fc.constantFrom('{', '}', ' ', '\\', 'a', '1', '.', '-', '\n', 'x', '$'), maxLength: 40 });
  const placeholderArb = fc.tuple(spaces, nameArb, spaces).map(([l, n, r]) => `{{${l}${n}${r}}}`);
  const templateArb = fc.array(fc.oneof(textArb, placeholderArb), { maxLength: 12 }).map((parts) => parts.join(''));

  it('with a value for every variable: never throws, nothing missing, output bounded by template + values', () => {
    fc.assert(
      fc.property(templateArb, fc.array(valueArb, { minLength: 1, maxLength: 5 }), (template, pool) => {
        const names = templateVariables(template);
        const values = Object.fromEntries(names.map((name, i) => [name, pool[i % pool.length]]));
        const { text, missing } = renderTemplate(template, values);
        expect(missing).toEqual([]);
        expect(renderOrThrow(template, {}, values)).toBe(text);
        const occurrences = [...template.matchAll(/\{\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}\}/g)];
        const bound = template.length + occurrences.reduce((sum, m) => sum + renderValue(values[m[1]] ?? '').length, 0);
        expect(text.length).toBeLessThanOrEqual(bound);
      }),
    );
  });

  it('placeholders between brace-free text are all replaced: none of a known variable is left', () => {
    const plain = fc.string({ unit: fc.constantFrom(' ', 'a', '1', '.', '-', '\n', '$', '\\'), maxLength: 20 });
    const plainValue = fc.string({ unit: fc.constantFrom(' ', 'b', '2', '_'), maxLength: 10 });
    fc.assert(
      fc.property(fc.array(fc.tuple(plain, placeholderArb)), plain, fc.array(plainValue, { minLength: 1 }), (pairs, tail, pool) => {
        // A backslash right before a placeholder is an escape; keep the literal text from ending in one.
        const parts = pairs.map(([text, placeholder]) => [text.replace(/\\+$/, ''), placeholder] as const);
        const template = parts.map(([text, placeholder]) => text + placeholder).join('') + tail;
        const names = templateVariables(template);
        const values = Object.fromEntries(names.map((name, i) => [name, pool[i % pool.length]]));
        const { text, missing } = renderTemplate(template, values);
        expect(missing).toEqual([]);
        expect(text).not.toContain('{{');
        const expected = parts.map(([literal, placeholder]) => literal + (values[placeholder.slice(2, -2).trim()] as string)).join('') + tail;
        expect(text).toBe(expected);
      }),
    );
  });

  it('with no values, missing is exactly templateVariables and the text is unchanged except escapes', () => {
    fc.assert(
      fc.property(templateArb, (template) => {
        const { text, missing } = renderTemplate(template, {});
        expect(missing).toEqual(templateVariables(template));
        if (!template.includes('\\')) expect(text).toBe(template);
      }),
    );
  });

  it('values are inserted verbatim: a value never changes how the rest of the template renders', () => {
    fc.assert(
      fc.property(templateArb, fc.string({ unit: fc.constantFrom('{', '}', ' ', 'a', '\\'), maxLength: 20 }), (template, injected) => {
        const names = templateVariables(template);
        if (names.length === 0) return;
        const base = Object.fromEntries(names.map((name) => [name, 'V']));
        const withInjected = { ...base, [names[0]]: injected };
        const plain = renderTemplate(template, base).text;
        const rendered = renderTemplate(template, withInjected).text;
        // Replacing every occurrence of the first variable's rendering gives the same text length delta.
        const count = [...template.matchAll(/(\\?)\{\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}\}/g)].filter((m) => m[1] === '' && m[2] === names[0]).length;
        expect(rendered.length - plain.length).toBe(count * (injected.length - 1));
      }),
    );
  });
});
