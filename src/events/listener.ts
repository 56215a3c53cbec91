import type { StoreListener } from '../store/notifications.ts';
import type { EventHub } from './hub.ts';
import type { PodOutputSignals } from './output-signals.ts';

/**
 * Several replicas (PostgreSQL): an events notification (`<org id> <event id>`, sent by the
 * writing transaction when it commits) wakes the hub's feed of that organization; an output one
 * (`<pod id>`) the pod's output streams. Both arrive on the replica's one LISTEN connection
 * (src/store/notifications.ts); when it is opened again after a drop, every feed reads the log once
 * more (what was committed meanwhile is in the log; only the wake-up was lost).
 */
export function listenForEvents(listener: StoreListener, hub: EventHub, output: PodOutputSignals): void {
  const id = (payload: string) => Number(payload.split(' ')[0]);
  listener.on('events', (payload) => {
    if (Number.isInteger(id(payload))) hub.wake(id(payload));
  });
  listener.on('output', (payload) => {
    if (Number.isInteger(id(payload))) output.wake(id(payload));
  });
  listener.onConnected(() => hub.wakeAll());
}
