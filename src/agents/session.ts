/**
 * Finding the resumable session id in an agent's output (loop `session_persistence`), for the
 * output formats `builtin.ts` selects:
 * - Claude Code `--output-format stream-json`: every JSON line (`system`/`init` first, `result`
 *   last) carries `"session_id"`.
 * - Codex `exec`: the header on stderr has a line `session id: <uuid>` (possibly bold, i.e. with
 *   ANSI escapes); with `--json` the first event is `{"type":"thread.started","thread_id":…}`.
 * - Gemini CLI `--output-format stream-json`: the `init` event carries `"session_id"`.
 * - OpenCode `run --format json`: every event carries `"sessionID": "ses_…"`.
 * - Aider, shell and custom agents print no resumable id: `null`.
 * When several ids appear in JSON output (a resumed run that forked a new session, output of
 * several autopilot iterations), the last one wins: it names the most recent state. Ids inside
 * the agent's own text are never taken: JSON formats carry that text inside string values, and the
 * Codex header line must be the first `session id: <uuid>` line.
 */
import { SESSION_ID_PATTERN } from './invocation.ts';

// CSI sequences (colours, cursor movement) and OSC sequences (titles, links).
// eslint-disable-next-line no-control-regex
const ANSI_PATTERN = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;
const CODEX_HEADER_PATTERN = /^\s*session id:\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*$/i;

function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

function jsonLines(text: string): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  for (const raw of text.split(/\r?\n|\r/)) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && !Array.isArray(value)) objects.push(value as Record<string, unknown>);
    } catch {
      // A partial line (output cut at the 1 MiB tail) or a non-JSON line that starts with `{`.
    }
  }
  return objects;
}

function validId(value: unknown): string | null {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value) ? value : null;
}

function lastOf<T>(items: T[], pick: (item: T) => string | null): string | null {
  let found: string | null = null;
  for (const item of items) found = pick(item) ?? found;
  return found;
}

/** The session id to pass as `AgentTask.resumeSessionId` next time, or `null` if there is none. */
export function extractSessionId(slug: string, outputText: string): string | null {
  const text = stripAnsi(outputText);
  switch (slug) {
    case 'claude-code':
    case 'gemini-cli':
      return lastOf(jsonLines(text), (event) => validId(event.session_id));
    case 'codex': {
      // The header comes first; the first match is taken so a `session id: …` line in the model's
      // final message (plain text on stdout) cannot win. Resuming keeps a Codex session's id.
      let found: string | null = null;
      for (const line of text.split(/\r?\n|\r/)) {
        const match = CODEX_HEADER_PATTERN.exec(line);
        if (match) {
          found = match[1];
          break;
        }
      }
      const fromJson = lastOf(jsonLines(text), (event) =>
        event.type === 'thread.started' ? validId(event.thread_id) : validId(event.session_id),
      );
      // Human and JSON output are never mixed in one run; prefer whichever is present.
      return found ?? fromJson;
    }
    case 'opencode':
      return lastOf(jsonLines(text), (event) => {
        const part = event.part && typeof event.part === 'object' ? (event.part as Record<string, unknown>) : null;
        return validId(event.sessionID) ?? validId(part?.sessionID);
      });
    default:
      return null;
  }
}
