import { invalid } from '../../errors.ts';
import type { SenderType } from '../../protocol/enums.ts';

/** A message's author as stored: its sender type and the pod it speaks for, if any. */
export interface MessageAuthor {
  senderType: SenderType;
  podKey: string | null;
}

export const CHANNEL_NAME_MIN = 2;
export const CHANNEL_NAME_MAX = 100;
/**
 * Size caps (characters). Bodies are at most 1 MiB, and a character takes at most 6 bytes in a JSON
 * body written as UTF-8 (a control character is escaped as \u00XX; a 4-byte character counts as
 * one character), so a create or update body holding every field at its maximum, written in any
 * characters, fits in 1 MiB: a valid document is never refused as too large (413).
 */
export const MAX_DESCRIPTION = 10_000;
export const MAX_DOCUMENT = 160_000;
export const MAX_CONTENT = 100_000;

/**
 * GET /channels pages with limit/offset: default 100 = max 100, so most organizations get every
 * channel in one answer while a huge org cannot ask for all at once (docs/decisions.md "Channels and messages").
 */
export const CHANNEL_LIST_LIMIT = { default: 100, max: 100 } as const;
/** GET /channels/:id/messages (docs/api.md "Paging"). */
export const MESSAGE_LIMIT = { default: 50, max: 100 } as const;

/**
 * Characters a channel name may not hold: control (Cc) and format (Cf) characters, lone
 * surrogates, line and paragraph separators, and the other default-ignorable code points (fillers,
 * variation selectors), which show as nothing and would let two names look the same.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/**
 * A channel name as it is stored: NFKC-normalized (`ſ` is `s`, full-width `ａ` is `a`) and trimmed,
 * 2 to 100 characters, none of them hidden (HIDDEN); otherwise 400 naming `/name`. Applied before
 * uniqueness is checked (docs/api.md "Channels and messages").
 */
export function normalizeChannelName(raw: string): string {
  const normalized = raw.normalize('NFKC');
  const hidden = HIDDEN.exec(normalized);
  if (hidden) {
    const code = hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw invalid('/name', `must not contain control, format or invisible characters (U+${code} at character ${[...normalized.slice(0, hidden.index)].length + 1})`);
  }
  const name = normalized.trim();
  const length = [...name].length;
  if (length < CHANNEL_NAME_MIN || length > CHANNEL_NAME_MAX) {
    throw invalid('/name', `must be ${CHANNEL_NAME_MIN} to ${CHANNEL_NAME_MAX} characters once normalized (NFKC) and trimmed, got ${length}`);
  }
  return name;
}

/**
 * Names are unique per org ignoring case; this is the form the unique index holds, of a name
 * normalized by normalizeChannelName.
 */
export const channelNameKey = (name: string): string => name.toLowerCase();
