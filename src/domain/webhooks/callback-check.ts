import { CallbackTargetError, resolveCallbackTarget } from '../../net/address-guard.ts';

/** How long a create or update waits for DNS to check a callback host. */
const CHECK_BUDGET_MS = 2_000;

/**
 * Why the address guard would refuse this callback URL (a private, loopback or link-local address,
 * given or resolved), or null (docs/api.md "Callbacks and repositories"): a loop is refused with 400 at create and
 * update rather than failing every delivery later. A host that does not resolve now, or not within
 * the budget, is accepted: each delivery checks again.
 */
export async function callbackGuardProblem(url: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), CHECK_BUDGET_MS)));
  try {
    return await Promise.race([resolveCallbackTarget(url, false).then(() => null), budget]);
  } catch (error) {
    if (error instanceof CallbackTargetError && error.refused) return error.message;
    return null;
  } finally {
    clearTimeout(timer);
  }
}
