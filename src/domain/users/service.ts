import { listUsers } from '../../store/users.ts';
import type { DomainContext } from '../context.ts';

/** GET /users: who is who, for pickers and for showing names (no email: any key of the org may ask). */
export async function listOrgUsers(ctx: DomainContext, orgId: number): Promise<{ id: number; name: string }[]> {
  const rows = await listUsers(ctx.store.db, orgId);
  return rows.map((user) => ({ id: Number(user.id), name: user.name })).sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}
