#!/usr/bin/env node
// Runs a bundled build of the TypeScript sources, made (or refreshed) on start by ./build.mjs.
import { entryModule } from './build.mjs';

try {
  const { main } = await import(await entryModule());
  await main(process.argv.slice(2));
} catch (error) {
  // Configuration and start-up errors are one line for the operator, not a stack trace.
  process.stderr.write(`drover: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.env.DROVER_DEBUG) console.error(error);
  process.exit(1);
}
