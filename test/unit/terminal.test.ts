/**
 * The CLI's filter of pod output (src/cli/client/terminal.ts, docs/cli.md "Pods"): ECMA-48 escape
 * sequences and C0/C1 controls other than newline and tab are taken out, whole, however the
 * output is cut into chunks; text is kept as it is.
 */
import { describe, expect, it } from 'vitest';
import { escapeJsonControls, stripTerminalControls, terminalFilter } from '../../src/cli/client/terminal.ts';

const ESC = '\u001b';
const BEL = '\u0007';

describe('stripTerminalControls', () => {
  it.each([
    ['SGR colours', `${ESC}[1;31mred${ESC}[0m`, 'red'],
    ['a cursor move and a screen clear', `a${ESC}[2J${ESC}[H${ESC}[10;20Hb`, 'ab'],
    ['private modes (alternate screen, hidden cursor)', `${ESC}[?1049h${ESC}[?25lx`, 'x'],
    ['a window title ended by BEL', `${ESC}]0;you have been pwned${BEL}after`, 'after'],
    ['a hyperlink ended by ST', `${ESC}]8;;https://evil.example${ESC}\\link${ESC}]8;;${ESC}\\`, 'link'],
    ['a clipboard write (OSC 52)', `${ESC}]52;c;ZWNobyBldmls${BEL}x`, 'x'],
    ['a DCS string', `${ESC}P1$r0m${ESC}\\y`, 'y'],
    ['APC, PM and SOS strings', `${ESC}_apc${ESC}\\${ESC}^pm${ESC}\\${ESC}Xsos${ESC}\\z`, 'z'],
    ['a reset (ESC c) and a charset switch (ESC ( 0)', `${ESC}c${ESC}(0q${ESC}(Bq`, 'qq'],
    ['C1 CSI and C1 OSC', `\u009b2J\u009d0;title\u009cok`, 'ok'],
    ['other C1 controls (NEL, IND)', `a\u0085b\u0084c`, 'abc'],
    ['carriage return, backspace, bell, NUL and DEL', `over\rwrite\b!${BEL}\u0000\u007f`, 'overwrite!'],
    ['newline and tab kept', 'col1\tcol2\nline2\n', 'col1\tcol2\nline2\n'],
    ['text of any script and emoji kept', 'héllo 世界 🙂 Ω', 'héllo 世界 🙂 Ω'],
    ['a lone ESC before a newline: the newline stays', `a${ESC}\nb`, 'a\nb'],
    ['a CSI cut by a newline: the newline stays', `a${ESC}[12\nb`, 'a\nb'],
    ['an OSC left open ends at its line', `${ESC}]0;title never ended\nvisible`, '\nvisible'],
    ['a sequence cancelled by CAN', `${ESC}]0;t\u0018shown`, 'shown'],
    ['ESC inside a string ends it and starts a sequence', `${ESC}]0;t${ESC}[31mshown`, 'shown'],
  ])('%s', (_label, input, expected) => {
    expect(stripTerminalControls(input)).toBe(expected);
  });
});

describe('terminalFilter across chunks', () => {
  const samples = [
    `start ${ESC}[38;5;196mcolour${ESC}[0m ${ESC}]0;title${BEL}mid ${ESC}]8;;u${ESC}\\l${ESC}]8;;${ESC}\\ \u009b1;2Hend\n`,
    `${ESC}P+q${ESC}\\a${ESC}(Bb${ESC}c\r\nc\t${ESC}]52;c;x\u009c🙂`,
  ];

  it.each(samples)('gives the same text cut at every place, or fed one character at a time: %#', (sample) => {
    const whole = stripTerminalControls(sample);
    for (let cut = 0; cut <= sample.length; cut++) {
      const filter = terminalFilter();
      expect(filter(sample.slice(0, cut)) + filter(sample.slice(cut))).toBe(whole);
    }
    const filter = terminalFilter();
    expect([...sample].map((c) => filter(c)).join('')).toBe(whole);
  });

  it('keeps a stream\'s state between chunks only: two streams do not share it', () => {
    const first = terminalFilter();
    const second = terminalFilter();
    expect(first(`x${ESC}]0;`)).toBe('x');
    expect(second('plain')).toBe('plain');
    expect(first(`title${BEL}y`)).toBe('y');
  });
});

describe('escapeJsonControls', () => {
  it('escapes DEL and C1 controls in JSON text; the value is unchanged', () => {
    const value = { data: `a\u009b2J\u007f\u0085${ESC}[0m é` };
    const text = escapeJsonControls(JSON.stringify(value));
    // eslint-disable-next-line no-control-regex -- what must not reach the terminal
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(text).toContain('\\u009b');
    expect(JSON.parse(text)).toEqual(value);
  });
});
