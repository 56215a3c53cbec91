/**
 * OpenCode, the published CLI (`opencode-ai`, pinned in test/helpers/agent-clis.ts), run from pods
 * by a real runner against the OpenAI chat-completions stand-in, through an
 * `@ai-sdk/openai-compatible` provider in the agent-home `opencode.json` (suite.ts has the tests).
 * SQLite only: these suites test the CLIs, not the database.
 */
import { realAgentSuite } from './suite.ts';

realAgentSuite('opencode', {
  usageCounts: 'main',
  unreported: [],
  // The stand-in's chat completions have no cache writes.
  zero: ['cache_write_tokens'],
  turns: 'main',
  sessionId: /^ses_[A-Za-z0-9]+$/,
});
