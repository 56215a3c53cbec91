import { TICKET_PRIORITIES, type TicketPriority } from '../../protocol/enums.ts';

/** urgent sorts first on the board. */
export const priorityRank = (priority: TicketPriority): number => TICKET_PRIORITIES.indexOf(priority);

export const MAX_LABELS = 20;
export const MAX_LABEL_LENGTH = 50;

/** Duplicates dropped, first occurrence kept. */
export function normalizeLabels(labels: readonly string[]): string[] {
  return [...new Set(labels)];
}

/** Slugs are matched ignoring case; prefixes are upper-case, so the canonical form is upper-case. */
export const canonicalSlug = (slug: string): string => slug.toUpperCase();

/** An org's default prefix: its slug upper-cased, letters only, at most 6, or TKT. */
export function defaultTicketPrefix(orgSlug: string): string {
  const letters = orgSlug.toUpperCase().replace(/[^A-Z]/g, '').slice(0, 6);
  return letters.length > 0 ? letters : 'TKT';
}

export const TICKET_PREFIX_PATTERN = '^[A-Z][A-Z0-9]{0,9}$';
