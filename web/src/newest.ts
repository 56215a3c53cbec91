/**
 * Only the newest read's answer is shown (docs/dashboard.md "Loading a page"). When a view's filter,
 * grouping or page changes while a read is in flight, the older read may answer last; its answer is
 * dropped instead of replacing the newer one (an answer for "by day" under "Group by: person").
 */
import { useCallback, useRef } from 'preact/hooks';

const never = <T>() => new Promise<T>(() => undefined);

/** A wrapper for a view's reads: a read's promise settles only if no later read was asked since. */
export function useNewest(): <T>(read: Promise<T>) => Promise<T> {
  const asked = useRef(0);
  return useCallback(function newest<T>(read: Promise<T>): Promise<T> {
    const mine = ++asked.current;
    const stillNewest = () => mine === asked.current;
    return read.then(
      (value): Promise<T> => (stillNewest() ? Promise.resolve(value) : never<T>()),
      (error: unknown): Promise<T> => (stillNewest() ? Promise.reject(error) : never<T>()),
    );
  }, []);
}
