import { useState } from 'preact/hooks';
import { Terminal } from '../terminal.tsx';
import { TranscriptView } from './transcript.tsx';

/** What a pod did: its transcript by default, its raw output one click away (pod and run pages). */
export function PodOutput({ podKey }: { podKey: string }) {
  const [raw, setRaw] = useState(false);
  return (
    <section aria-label="Output">
      <div class="view-head">
        <h2>{raw ? 'Raw output' : 'Transcript'}</h2>
        <button type="button" class="secondary" aria-pressed={raw} onClick={() => setRaw(!raw)}>
          {raw ? 'Show transcript' : 'Show raw output'}
        </button>
      </div>
      {raw ? <Terminal podKey={podKey} /> : <TranscriptView podKey={podKey} />}
    </section>
  );
}
