import { Type, type Static } from 'typebox';

/**
 * What the runner did with a pod's work at its end (docs/agents.md "Getting the work back"): the
 * fields of the pod's `delivery`, plus the work as `git format-patch` text, which the server keeps
 * whatever became of the push. Part of `pod_exited`, so the outcome and the work arrive (and are
 * kept by the runner until acknowledged) together.
 */
export const DELIVERY_STATUSES = ['pending', 'pushed', 'no_changes', 'failed'] as const;
export const DELIVER_MODES = ['branch', 'merge_request', 'none'] as const;
/** Commits listed in a delivery (the patch holds them all). */
export const MAX_DELIVERY_COMMITS = 100;
/**
 * A patch of up to PATCH_PART_CHARS characters travels inside `pod_exited` (one link message is
 * 2 MiB at most; a character is at most 6 bytes once JSON-escaped: 1.5 MiB); a larger one in
 * `pod_patch` parts of that size before it, up to MAX_PATCH_PARTS parts (8 Mi characters, what
 * the runner reads of git's output); a larger one is not kept (the pushed branch holds the work).
 */
export const PATCH_PART_CHARS = 256 * 1024;
export const MAX_PATCH_PARTS = 32;
/** The largest patch kept (characters). */
export const MAX_PATCH_CHARS = PATCH_PART_CHARS * MAX_PATCH_PARTS;

const Sha = Type.String({ pattern: '^[0-9a-f]{40,64}$' });

export const DeliveryCommit = Type.Object({ sha: Sha, subject: Type.String({ maxLength: 1000 }) }, { additionalProperties: false });

export const DeliveryReport = Type.Object(
  {
    status: Type.Enum(['pushed', 'no_changes', 'failed']),
    branch: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
    base_commit: Type.Union([Sha, Type.Null()]),
    head_commit: Type.Union([Sha, Type.Null()]),
    commits: Type.Array(DeliveryCommit, { maxItems: MAX_DELIVERY_COMMITS }),
    files_changed: Type.Integer({ minimum: 0 }),
    insertions: Type.Integer({ minimum: 0 }),
    deletions: Type.Integer({ minimum: 0 }),
    error: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
    patch: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

/** How a pod delivers (`CONFIG deliver`, `CONFIG deliver_branch`); absent from an older server: `branch`. */
export const DeliverSpec = Type.Object(
  { mode: Type.Enum(DELIVER_MODES), branch: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

export type DeliveryReport = Static<typeof DeliveryReport>;
export type DeliveryCommit = Static<typeof DeliveryCommit>;
export type DeliverSpec = Static<typeof DeliverSpec>;
export type DeliverMode = (typeof DELIVER_MODES)[number];
