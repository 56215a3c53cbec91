import type { Answer } from '../../client/index.ts';
import type { CommandContext, OptionSpec } from './framework.ts';

/**
 * Pod output is written by an agent, and whatever it read may have told it what to write: printed
 * as is, its escape sequences would drive the operator's terminal (retitle it, rewrite what is on
 * screen, hide lines, set the clipboard, or worse on some terminals). The CLI prints pod output
 * through these filters unless `--raw` (docs/cli.md "Pods").
 */

const ESC = 0x1b;
const BEL = 0x07;
/** CAN and SUB cancel a sequence in progress. */
const CAN = 0x18;
const SUB = 0x1a;
/** C1 controls that open a sequence: CSI, and the string sequences DCS, SOS, OSC, PM, APC; ST ends a string. */
const C1_CSI = 0x9b;
const C1_STRINGS = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);
const C1_ST = 0x9c;
/** After ESC: `[` opens a CSI; `P`, `X`, `]`, `^`, `_` a string (DCS, SOS, OSC, PM, APC). */
const ESC_CSI = 0x5b;
const ESC_STRINGS = new Set([0x50, 0x58, 0x5d, 0x5e, 0x5f]);
const BACKSLASH = 0x5c;

/** Where the filter stands: in plain text, or inside a sequence that began earlier (perhaps in an earlier chunk). */
type State = 'text' | 'escape' | 'escape-intermediate' | 'csi' | 'string' | 'string-escape';

/** In an ESC sequence's intermediates, or a CSI: the characters that continue it, and those that end it. */
const SEQUENCE_BYTES = {
  'escape-intermediate': { more: [0x20, 0x2f], final: [0x30, 0x7e] },
  csi: { more: [0x20, 0x3f], final: [0x40, 0x7e] },
} as const;

/** Anything a terminal would act on rather than show (C0 but newline and tab, DEL, C1). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_FILTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * A filter for one stream of text, fed chunk by chunk (a sequence cut between two chunks is still
 * recognized): drops ECMA-48 escape sequences (CSI, OSC and the other string sequences, two- and
 * three-character ESC sequences) and every C0 and C1 control character but newline and tab. A
 * string sequence (OSC, DCS…) left open ends at the end of its line, so an unterminated one cannot
 * hide the rest of the output.
 */
export function terminalFilter(): (text: string) => string {
  let state: State = 'text';
  return (text) => {
    if (state === 'text' && !NEEDS_FILTER.test(text)) return text;
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      switch (state) {
        case 'text':
          break;
        case 'escape':
          if (code === ESC_CSI) state = 'csi';
          else if (ESC_STRINGS.has(code)) state = 'string';
          else if (code >= 0x20 && code <= 0x2f) state = 'escape-intermediate';
          else if (code >= 0x30 && code <= 0x7e) state = 'text';
          else break; // not a sequence after all: the character is read as text
          continue;
        case 'escape-intermediate':
        case 'csi': {
          const { more, final } = SEQUENCE_BYTES[state];
          if (code >= more[0] && code <= more[1]) continue;
          if (code >= final[0] && code <= final[1]) {
            state = 'text';
            continue;
          }
          break; // a malformed sequence ends here; the character is read as text
        }
        case 'string-escape':
          if (code === BACKSLASH) {
            state = 'text';
            continue;
          }
          state = 'escape'; // ESC ends the string and may open another sequence
          i--;
          continue;
        case 'string':
          if (code === BEL || code === C1_ST || code === CAN || code === SUB) state = 'text';
          else if (code === ESC) state = 'string-escape';
          else if (code === 0x0a) {
            state = 'text';
            out += '\n';
          }
          continue;
      }
      state = 'text';
      if (code === 0x0a || code === 0x09) out += text[i];
      else if (code === ESC) state = 'escape';
      else if (code === C1_CSI) state = 'csi';
      else if (C1_STRINGS.has(code)) state = 'string';
      else if (code >= 0x20 && !(code >= 0x7f && code <= 0x9f)) out += text[i];
    }
    return out;
  };
}

/** `text` without terminal control sequences, as one whole (see terminalFilter). */
export const stripTerminalControls = (text: string): string => terminalFilter()(text);

/**
 * JSON text whose strings carry DEL and the C1 controls escaped (`\u009b`): `JSON.stringify`
 * escapes only U+0000–U+001F, and some terminals act on a C1 control written as UTF-8. Those
 * characters can only stand inside strings, so the result is the same JSON value.
 */
export const escapeJsonControls = (json: string): string =>
  json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `--raw` of the commands that print text agents wrote (a pod's result, messages, events). */
export const RAW_TEXT_OPTION: OptionSpec = { type: 'boolean', description: 'print text as it came, terminal control sequences included' };

/** `--raw` of the commands that print pod output. */
export const RAW_OPTION: OptionSpec = { type: 'boolean', description: "print the pod's output as it came, terminal control sequences included" };

/**
 * Prints the `output` events of one pod's stream: their text through one filter for the whole
 * stream, or with --json one JSON line each (C1 escaped); as they came with --raw.
 */
export function podOutputPrinter(ctx: CommandContext, raw: boolean): (event: { offset: number; data: string }) => void {
  const filter = raw ? (text: string) => text : terminalFilter();
  return (event) => {
    if (!ctx.json) ctx.out.write(filter(event.data));
    else {
      const line = `${JSON.stringify({ offset: event.offset, data: event.data })}\n`;
      ctx.out.write(raw ? line : escapeJsonControls(line));
    }
  };
}

/** An answer holding pod output (`GET /pods/{key}/output`): the API's JSON (C1 escaped) with --json, else the text filtered; as it came with --raw. */
export function showPodOutput(ctx: CommandContext, answer: Answer<{ output: string }>, raw: boolean): void {
  if (ctx.json) ctx.out.write(`${raw ? answer.raw : escapeJsonControls(answer.raw)}\n`);
  else ctx.out.write(raw ? answer.data.output : stripTerminalControls(answer.data.output));
}
