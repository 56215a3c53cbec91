import pg from 'pg';
import type { Store } from '../store/db.ts';
import type { EventHub } from './hub.ts';
import { outputChannel, type PodOutputSignals } from './output-signals.ts';
import { eventsChannel } from './writer.ts';

/**
 * PostgreSQL: one LISTEN connection per replica on the events channel and the output channel.
 * An events notification (`<org id> <event id>`, sent by the writing transaction when it commits)
 * wakes the hub's feed of that organization; an output one (`<pod id>`) the pod's output streams. When the connection drops it is opened again, and every feed reads the log
 * once more (what was committed meanwhile is in the log; only the wake-up was lost).
 */
export class EventListener {
  private client: pg.Client | null = null;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly hub: EventHub,
    private readonly output: PodOutputSignals,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async start(): Promise<void> {
    if (this.closed || this.store.kind !== 'postgres') return;
    const client = new pg.Client({ connectionString: this.store.postgres!.url });
    const events = eventsChannel(this.store)!;
    const output = outputChannel(this.store)!;
    client.on('notification', (message) => {
      const id = Number((message.payload ?? '').split(' ')[0]);
      if (!Number.isInteger(id)) return;
      if (message.channel === events) this.hub.wake(id);
      else if (message.channel === output) this.output.wake(id);
    });
    client.on('error', (error) => {
      this.onError(error);
      this.client = null;
      client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.start().catch(this.onError), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${events}`);
    await client.query(`listen ${output}`);
    this.client = client;
    this.hub.wakeAll();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
