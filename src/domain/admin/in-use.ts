import { AppError } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import { activePodsUsing, loopsUsing, type Use } from '../../store/references.ts';

/** Names listed in a RESOURCE_IN_USE message, at most. */
const NAMES_SHOWN = 5;

/**
 * Refuses to delete `what` (409 RESOURCE_IN_USE) while loops or active pods use it: deleting it
 * would change what they do behind their owners' backs. The message names them.
 */
export async function refuseWhileUsed(db: Executor, orgId: number, what: string, use: Use): Promise<void> {
  const [loops, pods] = await Promise.all([loopsUsing(db, orgId, use, NAMES_SHOWN), activePodsUsing(db, orgId, use, NAMES_SHOWN)]);
  const list = (names: string[]) => names.join(', ') + (names.length >= NAMES_SHOWN ? ', …' : '');
  const parts: string[] = [];
  if (loops.length > 0) parts.push(`loops ${list(loops)}`);
  if (pods.length > 0) parts.push(`active pods ${list(pods)}`);
  if (parts.length === 0) return;
  throw new AppError(
    'RESOURCE_IN_USE',
    `${what} is used by ${parts.join(' and ')}; change or delete the loops and let the pods end (or terminate them) first`,
  );
}
