import { transcriptFormat, transcriptParser, type TranscriptFormat } from '../../agents/transcript/index.ts';
import * as podOutput from '../../store/pod-output.ts';
import type { DomainContext } from '../context.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import { getPod } from './service.ts';

export interface TranscriptQuery {
  /** Only entries whose seq is greater. */
  after?: number;
  /** Only entries whose seq is smaller. */
  before?: number;
  /** The page is the newest `limit` matching entries instead of the oldest. */
  newest?: boolean;
  limit: number;
  /** Read the output as this format instead of its agent's. */
  format?: TranscriptFormat;
}

/**
 * GET /pods/:key/transcript (docs/transcripts.md "The API"): the kept output parsed whole on every
 * read (at most 1 MiB), so any replica answers and nothing is cached. While the pod is active, what
 * may still change is left out: its unterminated last line and a text still streaming in.
 */
export async function readTranscript(ctx: DomainContext, orgId: number, key: string, query: TranscriptQuery) {
  const pod = await getPod(ctx, orgId, key);
  // Read before the output: an ended pod's output is whole by the time it is read.
  const complete = !ACTIVE_POD_STATUSES.includes(pod.status);
  const { data, totalBytes } = await podOutput.readPodOutput(ctx.store.db, pod.id);
  const format = query.format ?? transcriptFormat(pod.agent_slug);
  const start = totalBytes - Buffer.byteLength(data);
  const parser = transcriptParser(format, { offset: start, midLine: start > 0 });
  const entries = parser.write(data);
  if (complete) entries.push(...parser.end());
  const after = query.after ?? -1;
  const before = query.before ?? Infinity;
  const fresh = entries.filter((entry) => entry.seq > after && entry.seq < before);
  // The newest page (docs/transcripts.md "The API"): what a reader shows first of a long transcript.
  const first = query.newest ? Math.max(0, fresh.length - query.limit) : 0;
  const page = fresh.slice(first, first + query.limit);
  return {
    entries: page,
    format,
    last_seq: page.at(-1)?.seq ?? query.after ?? null,
    has_more: fresh.length > first + page.length,
    earlier: first,
    limit: query.limit,
    complete,
    truncated: start > 0,
    total_bytes: totalBytes,
  };
}
