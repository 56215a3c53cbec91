/**
 * Gemini CLI, the published CLI (`@google/gemini-cli`, pinned in test/helpers/agent-clis.ts), run
 * from pods by a real runner against the Gemini API stand-in (`GOOGLE_GEMINI_BASE_URL` from `ENV`,
 * `selectedType: gemini-api-key` in the agent-home `settings.json`; suite.ts has the tests). SQLite
 * only: these suites test the CLIs, not the database.
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('gemini-cli', {
  // Its calls go through the runner's model relay (CREDENTIAL GEMINI_API_KEY), whose exact sum is the
  // pod's usage: every call counts (the model router's too), one turn each, no cache writes in
  // Gemini's usage; priced by the relay's price table.
  usageCounts: 'all',
  unreported: [],
  zero: ['cache_write_tokens'],
  turns: 'all',
  sessionId: SESSION_UUID,
});
