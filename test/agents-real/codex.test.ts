/**
 * Codex, the published CLI (`@openai/codex`, pinned in test/helpers/agent-clis.ts), run from pods by
 * a real runner against the OpenAI Responses stand-in, configured through a provider block in the
 * agent-home `config.toml` (suite.ts has the tests). SQLite only: these suites test the CLIs, not
 * the database.
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('codex', {
  usageCounts: 'main',
  // Codex reports tokens only; the stand-in's Responses API has no cache writes.
  unreported: ['cost_usd', 'turns'],
  zero: ['cache_write_tokens'],
  turns: null,
  sessionId: SESSION_UUID,
});
