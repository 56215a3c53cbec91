import { Type } from 'typebox';
import { Nullable } from './common.ts';

/** What became of a pod's work (docs/agents.md "Getting the work back"); on pods, runs and tickets' pods. */
export const Delivery = Type.Object(
  {
    status: Type.Enum(['pending', 'pushed', 'no_changes', 'failed'], {
      description: 'pending until the pod ends; pushed; no_changes (no commit, nothing pushed); failed (error says why; the patch is kept)',
    }),
    branch: Nullable(Type.String({ description: 'the branch the work was (or was to be) pushed to' })),
    base_commit: Nullable(Type.String({ description: 'the commit the work started from' })),
    head_commit: Nullable(Type.String({ description: 'the last commit of the work' })),
    commits: Type.Array(Type.Object({ sha: Type.String(), subject: Type.String() }), { description: 'the commits of the work, oldest first (at most the last 100)' }),
    files_changed: Type.Integer({ minimum: 0 }),
    insertions: Type.Integer({ minimum: 0 }),
    deletions: Type.Integer({ minimum: 0 }),
    merge_request: Nullable(
      Type.Object({ id: Type.Integer(), url: Type.String(), state: Type.Enum(['opened', 'merged', 'closed']) }, { description: 'with CONFIG deliver = merge_request, once opened' }),
    ),
    error: Nullable(Type.String()),
  },
  { $id: 'Delivery' },
);

/** A pod's delivery field: null for pods without a repository (or with CONFIG deliver = none). */
export const deliveryField = { delivery: Type.Union([Type.Ref('Delivery'), Type.Null()]) };
