/**
 * A pod's transcript (`GET /pods/:key/transcript`, docs/transcripts.md), read from its end and kept
 * up to date while the pod runs (docs/dashboard.md "What a pod did"): the first read asks for the
 * newest entries only (`newest=true`), so a long transcript costs what is shown; earlier entries are
 * read on demand (`before`). The pod's output stream, opened at the end of what was read, is the
 * signal that more entries may be there (no polling); each signal reads what follows the last
 * entry, one read at a time.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
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
  earlier: number;
  complete: boolean;
  truncated: boolean;
  total_bytes: number;
}

export interface TranscriptState {
  /** The entries read: the newest ones, and earlier ones as they are asked for. */
  entries: TranscriptEntry[];
  /** Entries before the first one read, not read yet. */
  earlier: number;
  format: string | null;
  complete: boolean;
  truncated: boolean;
  loaded: boolean;
  error: unknown;
}

const PAGE = 5000;

/** The first read of a pod's transcript: its newest `first` entries (main.tsx starts it early). */
export const openingRead = (podKey: string, first: number, format = ''): string =>
  `/pods/${encodeURIComponent(podKey)}/transcript?limit=${first}&newest=true${format ? `&format=${encodeURIComponent(format)}` : ''}`;
const EMPTY: TranscriptState = { entries: [], earlier: 0, format: null, complete: false, truncated: false, loaded: false, error: null };

/**
 * `format`: read the output as this format instead of the agent's own ('' for the agent's);
 * `first`: how many of the newest entries the first read asks for. `readEarlier(n)` reads up to
 * `n` entries before the first one read.
 */
export function useTranscript(podKey: string, format = '', first = PAGE): TranscriptState & { readEarlier(count: number): Promise<void> } {
  const { session } = useApp();
  const [state, setState] = useState<TranscriptState>(EMPTY);
  const path = `/pods/${encodeURIComponent(podKey)}/transcript`;
  const formatQuery = format ? `&format=${encodeURIComponent(format)}` : '';
  const generation = useRef(0);
  useEffect(() => {
    const current = ++generation.current;
    let stopStream: (() => void) | null = null;
    let after: number | null = null;
    let reading = false;
    let again = false;
    const stopped = () => generation.current !== current;
    setState(EMPTY);
    const read = async (): Promise<void> => {
      if (reading) return void (again = true);
      reading = true;
      try {
        let page: TranscriptPage;
        do {
          page = await api<TranscriptPage>('GET', after === null ? openingRead(podKey, first, format) : `${path}?limit=${PAGE}&after=${after}${formatQuery}`);
          if (stopped()) return;
          const opening = after === null;
          after = page.last_seq ?? after;
          const { entries, complete, truncated } = page;
          setState((s) => ({
            entries: entries.length ? s.entries.concat(entries) : s.entries,
            earlier: opening ? page.earlier : s.earlier,
            format: page.format,
            complete,
            truncated,
            loaded: true,
            error: null,
          }));
        } while (page.has_more);
        if (!page.complete && !stopStream) {
          // More output means more entries: read again on each chunk, and once at the end.
          stopStream = streamPodOutput(session, podKey, { onOutput: () => void read(), onEnd: () => void read(), onError: () => undefined }, page.total_bytes);
        }
      } catch (error) {
        if (!stopped()) setState((s) => ({ ...s, loaded: true, error }));
      } finally {
        reading = false;
      }
      if (again && !stopped()) {
        again = false;
        await read();
      }
    };
    void read();
    return () => {
      generation.current++;
      stopStream?.();
    };
  }, [podKey, session, format, first]);
  const readEarlier = async (count: number): Promise<void> => {
    const current = generation.current;
    const before = state.entries[0]?.seq;
    if (before === undefined || state.earlier === 0) return;
    try {
      const page = await api<TranscriptPage>('GET', `${path}?limit=${Math.min(count, PAGE)}&newest=true&before=${before}${formatQuery}`);
      if (generation.current !== current) return;
      setState((s) => (s.entries[0]?.seq === before ? { ...s, entries: page.entries.concat(s.entries), earlier: page.earlier } : s));
    } catch (error) {
      if (generation.current === current) setState((s) => ({ ...s, error }));
    }
  };
  return { ...state, readEarlier };
}
