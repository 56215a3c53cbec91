/**
 * OpenCode, the published CLI (`opencode-ai`, pinned in test/helpers/agent-clis.ts), run from pods
 * by a real runner against the OpenAI chat-completions stand-in through the runner's model relay:
 * the agent-home `opencode.json` has an `@ai-sdk/openai-compatible` provider whose key is
 * `{env:OPENAI_API_KEY}`, which the runner points at the relay (`CREDENTIAL OPENAI_API_KEY`, `ENV
 * OPENAI_BASE_URL` at the stand-in; suite.ts has the tests).
 */
import { realAgentSuite } from './suite.ts';

realAgentSuite('opencode', { sessionId: /^ses_[A-Za-z0-9]+$/, turns: 'agent' });
