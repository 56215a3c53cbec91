/** The runner's model relay (docs/agents.md "The model relay"): what the daemon and supervisor use. */
import { PriceTable, type PriceOverrides } from './pricing.ts';
import { ModelRelay, type RelayHooks } from './server.ts';

export { relayAgent, relayUrlForPod } from './agent-env.ts';
export { readPriceFile, PriceTable, type PriceOverrides } from './pricing.ts';
export { ModelRelay, type RelayCall, type RelayHooks } from './server.ts';

/** Starts a runner's relay on its loopback, where its pods reach it (agent-env.ts relayUrlForPod). */
export async function openRelay(prices: PriceOverrides, hooks: RelayHooks): Promise<ModelRelay> {
  const relay = new ModelRelay(new PriceTable(prices), hooks);
  await relay.listen('127.0.0.1');
  return relay;
}
