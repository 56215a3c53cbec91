#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npm install` is the only setup step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
try {
  await main(process.argv.slice(2));
} catch (error) {
  // Configuration and start-up errors are one line for the operator, not a stack trace.
  process.stderr.write(`drover: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.env.DROVER_DEBUG) console.error(error);
  process.exit(1);
}
