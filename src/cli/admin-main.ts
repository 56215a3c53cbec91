import { runAdmin } from './admin.ts';

/**
 * `drover admin …` from a bundle of its own (.build/admin.mjs, see bin/build.mjs): the commands
 * only call the admin API, so they load none of the server (Fastify, Kysely, the database
 * drivers), which took about 0.8 s of CPU at every start (docs/decisions.md "Storage and performance").
 */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await runAdmin(argv.slice(1));
}
