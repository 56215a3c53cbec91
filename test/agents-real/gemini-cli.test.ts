/**
 * Gemini CLI, the published CLI (`@google/gemini-cli`, pinned in test/helpers/agent-clis.ts), run
 * from pods by a real runner against the Gemini API stand-in (`GOOGLE_GEMINI_BASE_URL` from `ENV`,
 * `selectedType: gemini-api-key` in the agent-home `settings.json`; suite.ts has the tests). SQLite
 * only: these suites test the CLIs, not the database.
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('gemini-cli', {
  // Its stats count the model router's request too.
  usageCounts: 'all',
  unreported: ['cache_write_tokens', 'cost_usd', 'turns'],
  zero: [],
  turns: null,
  sessionId: SESSION_UUID,
});
