/**
 * Claude Code, the published CLI (`@anthropic-ai/claude-code`, pinned in test/helpers/agent-clis.ts),
 * run from pods by a real runner against the Anthropic Messages stand-in (suite.ts has the tests).
 * SQLite only: these suites test the CLIs, not the database. The runner runs as `nobody` when the
 * tests run as root, since Claude Code refuses its default `bypassPermissions` as root.
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('claude-code', {
  usageCounts: 'main',
  unreported: [],
  zero: [],
  turns: 'main',
  terminateReachesTools: true,
  sessionId: SESSION_UUID,
});
