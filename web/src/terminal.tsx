import { useEffect, useRef, useState } from 'preact/hooks';
import { useApp } from './context.ts';
import { streamPodOutput } from './live.ts';

/** Strips terminal control sequences (colours, cursor moves) the agents may print. */
// eslint-disable-next-line no-control-regex -- these are the escape sequences being removed
const CONTROL = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** A pod's output, live from the output stream, in a terminal-like box that follows the end. */
export function Terminal({ podKey, label }: { podKey: string; label?: string }) {
  const { session } = useApp();
  const [text, setText] = useState('');
  const [end, setEnd] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLPreElement>(null);
  const follow = useRef(true);
  useEffect(() => {
    setText('');
    setEnd(null);
    setError(null);
    return streamPodOutput(session, podKey, {
      onOutput: (chunk) => setText((t) => t + chunk.replace(CONTROL, '')),
      onEnd: (status, exitCode) => setEnd(`${status}${exitCode === null ? '' : `, exit code ${exitCode}`}`),
      onError: setError,
    });
  }, [podKey]);
  useEffect(() => {
    const el = box.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <div>
      <pre
        ref={box}
        class="terminal"
        role="log"
        aria-label={label ?? `Output of ${podKey}`}
        tabIndex={0}
        data-pod={podKey}
        onScroll={(e) => {
          const el = e.currentTarget;
          follow.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
        }}
      >
        {text || (end ? '(no output)' : 'Waiting for output…')}
      </pre>
      <p class="hint" aria-live="polite">
        {error ? `Output unavailable: ${error}` : end ? `Stream ended: ${end}.` : 'Streaming live.'}
      </p>
    </div>
  );
}
