/**
 * The lines a file edit changes, for showing it as a diff (the CLI's transcript view; the
 * dashboard's): the old and the new text as lines, without the lines they share at both ends.
 */
import type { FileEdit } from './types.ts';

const lines = (text: string | null): string[] => (text === null || text === '' ? [] : text.replace(/\n+$/, '').split('\n'));

export function changedLines(edit: Pick<FileEdit, 'old_text' | 'new_text'>): { removed: string[]; added: string[] } {
  const before = lines(edit.old_text);
  const after = lines(edit.new_text);
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { removed: before.slice(start, before.length - end), added: after.slice(start, after.length - end) };
}
