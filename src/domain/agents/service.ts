import { AppError, notFound } from '../../errors.ts';
import * as customAgents from '../../store/custom-agents.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { CustomAgentRow } from '../../store/schema-runners.ts';
import { refuseWhileUsed } from '../admin/in-use.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';

export const PROMPT_POSITIONS = ['last', 'first', 'stdin', 'env'] as const;
export type PromptPosition = (typeof PROMPT_POSITIONS)[number];

/** POST /admin/orgs/{org}/agents: an org's own agent command, usable wherever an agent slug is. */
export async function createCustomAgent(
  ctx: DomainContext,
  orgSlug: string,
  input: { slug: string; name: string; command: string; args?: string[]; prompt_position?: PromptPosition },
): Promise<CustomAgentRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  if (isBuiltinAgentSlug(input.slug)) throw new AppError('ALREADY_EXISTS', `"${input.slug}" is a built-in agent`);
  try {
    return await customAgents.insertCustomAgent(ctx.store.db, {
      org_id: org.id,
      slug: input.slug,
      name: input.name,
      command: input.command,
      args: JSON.stringify(input.args ?? []),
      prompt_position: input.prompt_position ?? 'last',
      created_at: ctx.now(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `agent "${input.slug}" already exists`);
    throw error;
  }
}

export async function listCustomAgents(ctx: DomainContext, orgSlug: string): Promise<CustomAgentRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return customAgents.listCustomAgents(ctx.store.db, org.id);
}

/** PATCH /admin/orgs/{org}/agents/{slug}: pods started from now on use the new definition. */
export async function updateCustomAgent(
  ctx: DomainContext,
  orgSlug: string,
  slug: string,
  input: { name?: string; command?: string; args?: string[]; prompt_position?: PromptPosition },
): Promise<CustomAgentRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const agent = await customAgents.updateCustomAgent(ctx.store.db, org.id, slug, {
    name: input.name,
    command: input.command,
    args: input.args === undefined ? undefined : JSON.stringify(input.args),
    prompt_position: input.prompt_position,
  });
  if (!agent) throw notFound('agent');
  return agent;
}

/**
 * DELETE /admin/orgs/{org}/agents/{slug}: refused (409 RESOURCE_IN_USE) while loops name the agent
 * or pods running it are active; finished pods keep the slug they ran with.
 */
export async function deleteCustomAgent(ctx: DomainContext, orgSlug: string, slug: string): Promise<void> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  await ctx.store.transaction(async (trx) => {
    if (!(await customAgents.findCustomAgent(trx, org.id, slug))) throw notFound('agent');
    await refuseWhileUsed(trx, org.id, `agent ${slug}`, { agentSlug: slug });
    await customAgents.deleteCustomAgent(trx, org.id, slug);
  });
}
