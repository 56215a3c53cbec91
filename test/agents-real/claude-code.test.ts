/**
 * Claude Code, the published CLI (`@anthropic-ai/claude-code`, pinned in test/helpers/agent-clis.ts),
 * run from pods by a real runner against the Anthropic Messages stand-in (suite.ts has the tests).
 * SQLite only: these suites test the CLIs, not the database. Claude Code refuses its default
 * `bypassPermissions` as root: in the pod sandbox it runs as a non-root user, whoever runs the tests.
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('claude-code', { sessionId: SESSION_UUID, turns: 'agent' });
