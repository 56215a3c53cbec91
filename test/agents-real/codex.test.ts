/**
 * Codex, the published CLI (`@openai/codex`, pinned in test/helpers/agent-clis.ts), run from pods by
 * a real runner against the OpenAI Responses stand-in through the runner's model relay
 * (`CREDENTIAL OPENAI_API_KEY`, `ENV OPENAI_BASE_URL` at the stand-in; the runner gives Codex the
 * relay's provider block, over the agent-home `config.toml`'s; suite.ts has the tests).
 */
import { SESSION_UUID, realAgentSuite } from './suite.ts';

realAgentSuite('codex', { sessionId: SESSION_UUID, turns: 'relay' });
