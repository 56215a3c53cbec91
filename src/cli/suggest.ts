/**
 * "Did you mean": a mistyped command gets one short line naming the nearest command (when one is
 * near enough) instead of the whole help, and exit 2.
 */

/** Edit distance (insertions, deletions, substitutions; a swap of two neighbours counts once). */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The nearest candidate: within a third of the word's length (at least 1, at most 3 edits), or one the word begins or ends. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = distance(lower, candidate);
    if (!best || score < best.score) best = { candidate, score };
  }
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  if (best && best.score <= limit) return best.candidate;
  if (lower.length >= 3) return candidates.find((c) => c.startsWith(lower) || lower.startsWith(c));
  return undefined;
}

/**
 * `drover: unknown command 'tikets'; did you mean 'tickets'?` and where the list is, as one short
 * message. `prefix` is what comes before the word (`pods ` for a pods subcommand).
 */
export function unknownCommand(word: string, candidates: readonly string[], prefix = '', help = 'drover --help'): string {
  const guess = nearest(word, candidates);
  const shown = `${prefix}${word}`;
  return `drover: unknown command '${shown}'${guess ? `; did you mean '${prefix}${guess}'?` : ''}\nRun "${help}" for the list of commands.\n`;
}
