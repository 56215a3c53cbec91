/**
 * A pod's transcript as a reader wants it (docs/dashboard.md "Views"): the agent's text, each tool
 * call with its input (file edits as diffs), command output folded, errors in red. Long transcripts
 * are read and shown from their end, a page at a time, so a 5,000-entry transcript loads as fast as a short one.
 */
import { useState } from 'preact/hooks';
import { TRANSCRIPT_FORMATS, changedLines, type FileEdit } from '../../../src/protocol/transcript.ts';
import { ErrorBanner } from '../ui.tsx';
import { useTranscript, type TranscriptEntry } from '../transcript-feed.ts';

/** Entries shown first, and read first (main.tsx reads them before the first render). */
export const PAGE = 200;
const INPUT_CHARS = 2000;

function Diff({ edit }: { edit: FileEdit }) {
  const { removed, added } = changedLines(edit);
  return (
    <figure class="diff">
      <figcaption>
        {edit.change} <code>{edit.path}</code>
      </figcaption>
      {removed.length + added.length > 0 && (
        <pre>
          {removed.map((l) => (
            <del>-{l}{'\n'}</del>
          ))}
          {added.map((l) => (
            <ins>+{l}{'\n'}</ins>
          ))}
        </pre>
      )}
    </figure>
  );
}

function Input({ input }: { input: unknown }) {
  if (input === null || input === undefined || (typeof input === 'object' && Object.keys(input).length === 0)) return null;
  const text = typeof input === 'string' ? input : JSON.stringify(input, null, 2);
  return <pre class="t-input">{text.length > INPUT_CHARS ? `${text.slice(0, INPUT_CHARS)}… (${text.length - INPUT_CHARS} more characters)` : text}</pre>;
}

function Entry({ entry }: { entry: TranscriptEntry }) {
  const tool = entry.tool;
  switch (entry.kind) {
    case 'tool_call':
      return (
        <li class="t-call" data-kind="tool_call">
          <div class="t-title">
            <span class="tag">{tool?.name ?? 'tool'}</span> <code>{entry.text}</code>
          </div>
          {tool?.edits?.length ? tool.edits.map((e) => <Diff edit={e} />) : tool?.command ? null : <Input input={tool?.input} />}
        </li>
      );
    case 'tool_result': {
      const lines = entry.text ? entry.text.split('\n').length : 0;
      return (
        <li class={`t-result${tool?.is_error ? ' t-error' : ''}`} data-kind="tool_result">
          <details open={tool?.is_error}>
            <summary>
              {tool?.is_error ? 'Error output' : 'Output'} of {tool?.command ? <code>{tool.command}</code> : (tool?.name ?? 'the tool')} ({lines} {lines === 1 ? 'line' : 'lines'})
            </summary>
            <pre>{entry.text || '(empty)'}</pre>
          </details>
        </li>
      );
    }
    case 'error':
      return (
        <li class="t-error" data-kind="error">
          <strong>Error:</strong> {entry.text}
        </li>
      );
    case 'status':
      return (
        <li class="t-status hint" data-kind="status">
          {entry.text}
        </li>
      );
    default:
      return (
        <li class="t-text" data-kind="text">
          {entry.text}
        </li>
      );
  }
}

// The formats the API reads (src/agents/transcript/types.ts); '' is the pod's agent's own.
const FORMATS = ['', ...TRANSCRIPT_FORMATS];

export function TranscriptView({ podKey }: { podKey: string }) {
  const [format, setFormat] = useState('');
  const t = useTranscript(podKey, format, PAGE);
  const [shown, setShown] = useState(PAGE);
  const [busy, setBusy] = useState(false);
  const total = t.earlier + t.entries.length;
  const hidden = Math.max(0, total - shown);
  const visible = t.entries.length > shown ? t.entries.slice(t.entries.length - shown) : t.entries;
  const showEarlier = async () => {
    const more = PAGE * 5;
    setBusy(true);
    // Read what is not read yet of the entries about to be shown, then show them.
    const missing = shown + more - t.entries.length;
    if (missing > 0) await t.readEarlier(missing);
    setShown((n) => n + more);
    setBusy(false);
  };
  return (
    <div class="transcript" data-loaded={t.loaded ? 'true' : 'false'} data-entries={total}>
      <label class="inline">
        Read the output as
        <select value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          {FORMATS.map((f) => (
            <option value={f}>{f || "the agent's format"}</option>
          ))}
        </select>
      </label>
      <ErrorBanner error={t.error} />
      {t.truncated && <p class="hint">The start of this pod's output is no longer kept (the last 1 MiB is): earlier entries are gone.</p>}
      {hidden > 0 && (
        <button type="button" class="secondary" disabled={busy} onClick={() => void showEarlier()}>
          Show earlier entries ({hidden.toLocaleString()} more)
        </button>
      )}
      <ol class="t-entries" aria-label={`Transcript of ${podKey}`}>
        {visible.map((e) => (
          <Entry key={e.seq} entry={e} />
        ))}
      </ol>
      <p class="hint" aria-live="polite">
        {!t.loaded ? 'Reading the transcript…' : total === 0 ? (t.complete ? 'The agent printed nothing.' : 'Waiting for the agent…') : t.complete ? `${total.toLocaleString()} entries (read as ${t.format}).` : 'Live.'}
      </p>
    </div>
  );
}
