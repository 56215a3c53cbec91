/**
 * The CLI addresses a loop's runs by their number, as they are titled everywhere (`#` in
 * `drover loops runs`, "Run #3" in the dashboard); the API addresses them by id. This finds the id
 * of run number N (docs/cli.md "Loops").
 */
import { ApiError, ORG_BASE, type DroverClient } from '../../client/index.ts';
import { toInteger } from './framework.ts';

const PAGE = 100;

/** The id of run `#number` of loop `slug`; an API-style 404 when there is none. */
export async function runIdByNumber(client: DroverClient, slug: string, raw: string): Promise<number> {
  const number = toInteger('RUN (the run number, # in "drover loops runs")', raw.replace(/^#/, ''), 1);
  const page = async (offset: number, limit: number) => {
    const query = { offset, limit };
    return (await client.call(client.api.GET(`${ORG_BASE}/loops/{slug}/runs`, { params: { path: { ...client.path, slug }, query } }))).data;
  };
  // Runs are listed newest first and numbered 1, 2, 3…: run N sits near offset (latest − N).
  const first = await page(0, 1);
  const latest = first.runs[0]?.run_number ?? 0;
  const near = Math.max(0, latest - number - PAGE / 2);
  let found = (await page(near, PAGE)).runs.find((r) => r.run_number === number);
  // Deleted or skipped numbers shift the guess: then every page is looked at.
  for (let offset = 0; !found && number <= latest && offset < first.total; offset += PAGE) {
    if (offset !== near) found = (await page(offset, PAGE)).runs.find((r) => r.run_number === number);
  }
  if (!found) throw new ApiError(404, { code: 'NOT_FOUND', error: `run #${number} of loop ${slug} not found` }, null);
  return found.id;
}
