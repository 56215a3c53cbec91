import { sql } from 'kysely';
import type { Executor } from './db.ts';

/** How much of a pod's output is kept: its last 1 MiB (docs/api.md "Pods"). */
export const OUTPUT_KEEP_BYTES = 1024 * 1024;

/**
 * A pod's output is stored as the chunks its runner sent, each at its byte offset in the output
 * (append-only): writing a chunk never reads or rewrites what is stored. Chunks that fall wholly
 * before the kept tail are deleted now and then (`trimPodOutput`); readers cut the tail exactly.
 */

/**
 * Stores bytes [start, start + bytes of data) of a pod's output. Returns false, storing nothing,
 * when a chunk already starts there (another writer got that offset: read the end again).
 */
export async function appendOutputChunk(db: Executor, podId: number, start: number, data: string): Promise<boolean> {
  const inserted = await db
    .insertInto('pod_output_chunks')
    .values({ pod_id: podId, start_offset: start, end_offset: start + Buffer.byteLength(data), data })
    .onConflict((oc) => oc.columns(['pod_id', 'start_offset']).doNothing())
    .returning('pod_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** How many bytes of output the pod has written (the end of its last chunk), 0 when none. */
export async function podOutputEnd(db: Executor, podId: number): Promise<number> {
  const row = await db
    .selectFrom('pod_output_chunks')
    .select('end_offset')
    .where('pod_id', '=', podId)
    .orderBy('start_offset', 'desc')
    .limit(1)
    .executeTakeFirst();
  return Number(row?.end_offset ?? 0);
}

/** Deletes the chunks that end at or before `before` (they lie wholly outside the kept tail). */
export async function trimPodOutput(db: Executor, podId: number, before: number): Promise<void> {
  await db.deleteFrom('pod_output_chunks').where('pod_id', '=', podId).where('end_offset', '<=', before).execute();
}

/** The chunks that reach past `from` (or, without it, into the kept tail), oldest first, read in one statement. */
async function chunksFrom(db: Executor, podId: number, from: number | null) {
  const threshold =
    from === null
      ? sql<number>`coalesce((select end_offset from pod_output_chunks where pod_id = ${podId} order by start_offset desc limit 1), 0) - ${OUTPUT_KEEP_BYTES}`
      : sql<number>`${from}`;
  return db
    .selectFrom('pod_output_chunks')
    .select(['start_offset', 'end_offset', 'data'])
    .where('pod_id', '=', podId)
    .where('end_offset', '>', threshold)
    .orderBy('start_offset')
    .execute();
}

/** The kept output (its last 1 MiB, cut on a character boundary) and how many bytes were written in all. */
export async function readPodOutput(db: Executor, podId: number): Promise<{ data: string; totalBytes: number }> {
  const rows = await chunksFrom(db, podId, null);
  if (rows.length === 0) return { data: '', totalBytes: 0 };
  return { data: keepTail(rows.map((r) => r.data).join('')), totalBytes: Number(rows[rows.length - 1].end_offset) };
}

/**
 * Output from byte `offset` on (for a live stream that resumes where it stopped): at most
 * `maxBytes` of it, starting no earlier than the kept tail, and starting and ending on character
 * boundaries. `offset` is where `data` starts (moved forward when the asked offset is no longer
 * kept or falls inside a character), `next` where the following read should start, `totalBytes`
 * how much the pod has written so far.
 */
export async function readPodOutputFrom(
  db: Executor,
  podId: number,
  offset: number,
  maxBytes = OUTPUT_KEEP_BYTES,
): Promise<{ offset: number; data: string; next: number; totalBytes: number }> {
  const totalBytes = await podOutputEnd(db, podId);
  let from = Math.min(Math.max(offset, totalBytes - OUTPUT_KEEP_BYTES, 0), totalBytes);
  const rows = from >= totalBytes ? [] : await chunksFrom(db, podId, from);
  if (rows.length === 0) return { offset: from, data: '', next: from, totalBytes };
  const first = Number(rows[0].start_offset);
  const parts: Buffer[] = [];
  let length = 0;
  for (const row of rows) {
    parts.push(Buffer.from(row.data));
    length += parts[parts.length - 1].length;
    if (first + length - from >= maxBytes) break;
  }
  const bytes = Buffer.concat(parts);
  // The kept tail may already have been trimmed past `from` by a writer since totalBytes was read.
  from = Math.max(from, first);
  let start = from - first;
  while (start < bytes.length && isContinuation(bytes[start])) start++;
  let end = Math.min(bytes.length, start + maxBytes);
  while (end > start && end < bytes.length && isContinuation(bytes[end])) end--;
  return { offset: first + start, data: bytes.subarray(start, end).toString(), next: first + end, totalBytes: Math.max(totalBytes, first + bytes.length) };
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

export function keepTail(text: string, maxBytes = OUTPUT_KEEP_BYTES): string {
  const buffer = Buffer.from(text);
  if (buffer.length <= maxBytes) return text;
  // Drop bytes up to the next character start so the kept tail is valid UTF-8.
  let start = buffer.length - maxBytes;
  while (start < buffer.length && isContinuation(buffer[start])) start++;
  return buffer.subarray(start).toString();
}

/** The first at most `maxBytes` bytes of `text`, cut on a character boundary. */
export function keepHead(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text);
  if (buffer.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  while (end > 0 && isContinuation(buffer[end])) end--;
  return buffer.subarray(0, end).toString();
}
