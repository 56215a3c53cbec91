import type { Executor } from './db.ts';

export const OUTPUT_KEEP_BYTES = 1024 * 1024;

/** Appends a chunk, keeping only the last 1 MiB (cut on a character boundary). */
export async function appendPodOutput(db: Executor, podId: number, chunk: string): Promise<void> {
  const existing = await db.selectFrom('pod_output').selectAll().where('pod_id', '=', podId).executeTakeFirst();
  const chunkBytes = Buffer.byteLength(chunk);
  if (!existing) {
    await db.insertInto('pod_output').values({ pod_id: podId, data: keepTail(chunk), total_bytes: chunkBytes }).execute();
    return;
  }
  await db
    .updateTable('pod_output')
    .set({ data: keepTail(existing.data + chunk), total_bytes: Number(existing.total_bytes) + chunkBytes })
    .where('pod_id', '=', podId)
    .execute();
}

export function keepTail(text: string, maxBytes = OUTPUT_KEEP_BYTES): string {
  const buffer = Buffer.from(text);
  if (buffer.length <= maxBytes) return text;
  // Drop bytes up to the next character start so the kept tail is valid UTF-8.
  let start = buffer.length - maxBytes;
  while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
  return buffer.subarray(start).toString();
}

export async function readPodOutput(db: Executor, podId: number) {
  return db.selectFrom('pod_output').selectAll().where('pod_id', '=', podId).executeTakeFirst();
}
