/**
 * Gemini CLI, the published CLI (`@google/gemini-cli`, pinned in test/helpers/agent-clis.ts), run
 * from pods by a real runner against the Gemini API stand-in through the runner's model relay
 * (`CREDENTIAL GEMINI_API_KEY`, `ENV GOOGLE_GEMINI_BASE_URL` at the stand-in; the agent-home has no
 * `settings.json`: the runner writes the `selectedType` the relay needs; suite.ts has the tests).
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('gemini-cli', { sessionId: SESSION_UUID, turns: 'relay' });
