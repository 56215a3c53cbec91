/**
 * A pod's transcript (`GET /pods/:key/transcript`, docs/transcripts.md), read page by page and kept
 * up to date while the pod runs: the pod's output stream, opened at the end of what was read, is
 * the signal that more entries may be there (no polling); each signal reads what follows the last
 * entry, one read at a time.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import { useApp } from './context.ts';
import { streamPodOutput } from './live.ts';
import type { TranscriptEntry } from '../../src/protocol/transcript.ts';

export type { TranscriptEntry };

interface TranscriptPage {
  entries: TranscriptEntry[];
  format: string;
  last_seq: number | null;
  has_more: boolean;
  complete: boolean;
  truncated: boolean;
  total_bytes: number;
}

export interface TranscriptState {
  entries: TranscriptEntry[];
  format: string | null;
  complete: boolean;
  truncated: boolean;
  loaded: boolean;
  error: unknown;
}

const PAGE = 5000;

/** `format`: read the output as this format instead of the agent's own ('' for the agent's). */
export function useTranscript(podKey: string, format = ''): TranscriptState {
  const { session } = useApp();
  const [state, setState] = useState<TranscriptState>({ entries: [], format: null, complete: false, truncated: false, loaded: false, error: null });
  useEffect(() => {
    let stopped = false;
    let stopStream: (() => void) | null = null;
    let after: number | null = null;
    let reading = false;
    let again = false;
    setState({ entries: [], format: null, complete: false, truncated: false, loaded: false, error: null });
    const read = async (): Promise<void> => {
      if (reading) return void (again = true);
      reading = true;
      try {
        let page: TranscriptPage;
        do {
          const q = `?limit=${PAGE}${after === null ? '' : `&after=${after}`}${format ? `&format=${encodeURIComponent(format)}` : ''}`;
          page = await api<TranscriptPage>('GET', `/pods/${encodeURIComponent(podKey)}/transcript${q}`);
          if (stopped) return;
          after = page.last_seq ?? after;
          const { entries, complete, truncated } = page;
          setState((s) => ({ entries: entries.length ? s.entries.concat(entries) : s.entries, format: page.format, complete, truncated, loaded: true, error: null }));
        } while (page.has_more);
        if (!page.complete && !stopStream) {
          // More output means more entries: read again on each chunk, and once at the end.
          stopStream = streamPodOutput(session, podKey, { onOutput: () => void read(), onEnd: () => void read(), onError: () => undefined }, page.total_bytes);
        }
      } catch (error) {
        if (!stopped) setState((s) => ({ ...s, loaded: true, error }));
      } finally {
        reading = false;
      }
      if (again && !stopped) {
        again = false;
        await read();
      }
    };
    void read();
    return () => {
      stopped = true;
      stopStream?.();
    };
  }, [podKey, session, format]);
  return state;
}
