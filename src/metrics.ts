/**
 * Figures that parts of the server report for `GET /metrics` (src/api/metrics.ts reads them at
 * scrape time). Kept here, below every layer, so any part can set them without importing the API.
 */
let eventSubscribers = 0;

/** The number of live event-stream subscribers on this replica (the events feature sets it). */
export function setEventSubscribers(count: number): void {
  eventSubscribers = Math.max(0, Math.trunc(count));
}

/** Adjusts the subscriber count by `delta` (+1 on subscribe, -1 on unsubscribe). */
export function addEventSubscribers(delta: number): void {
  setEventSubscribers(eventSubscribers + delta);
}

export function currentEventSubscribers(): number {
  return eventSubscribers;
}
