import { notFound } from '../../errors.ts';
import { findPodPatch } from '../../store/pod-patches.ts';
import type { DomainContext } from '../context.ts';
import { getPod } from '../pods/service.ts';

/** GET /pods/:key/patch: the work as format-patch text; 404 for an unknown pod or one with no work kept. */
export async function readPatch(ctx: DomainContext, orgId: number, key: string): Promise<string> {
  const pod = await getPod(ctx, orgId, key);
  const patch = await findPodPatch(ctx.store.db, pod.id);
  if (patch === undefined) throw notFound('patch');
  return patch;
}
