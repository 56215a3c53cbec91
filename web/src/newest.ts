/**
 * Only the newest read's answer is shown (docs/dashboard.md "Loading a page"). When a view's filter,
 * grouping or page changes while a read is in flight, the older read may answer last; its answer is
 * dropped instead of replacing the newer one (an answer for "by day" under "Group by: person").
 */
import { useCallback, useRef } from 'preact/hooks';

/**
 * Reads through one of these apply their answer (or their error) only if no later read was asked
 * through the same one since. The returned promise settles either way, so a caller may await it.
 */
export type Newest = <T>(read: Promise<T>, apply: (value: T) => void, fail: (error: unknown) => void) => Promise<void>;

export function useNewest(): Newest {
  const asked = useRef(0);
  return useCallback(<T>(read: Promise<T>, apply: (value: T) => void, fail: (error: unknown) => void) => {
    const mine = ++asked.current;
    const stillNewest = () => mine === asked.current;
    return read.then(
      (value) => void (stillNewest() && apply(value)),
      (error: unknown) => void (stillNewest() && fail(error)),
    );
  }, []);
}
