#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npm install` is the only setup step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv.slice(2));
