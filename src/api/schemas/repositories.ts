import { Type, type Static, type TSchema } from 'typebox';
import { MAX_TOKEN_LENGTH, MERGE_REQUEST_STATES, PROVIDERS } from '../../domain/repositories/model.ts';
import { TicketPrefix } from './admin.ts';
import { NonBlank, Nullable, OrgParams, Text, Timestamp, VISIBLE_ASCII, explainedPattern } from './common.ts';
export { NoQuery } from './common.ts';

export const Provider = Type.Enum(PROVIDERS);
/** Capped so that a huge number is a 400 rather than an overflow in a bigint column. */
export const RepositoryId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
/** Tokens hold no whitespace or control characters (see tokenProblem). */
const TOKEN_PATTERN = explainedPattern('^[^\\s\\u0000-\\u001f\\u007f]+$', 'must not contain whitespace or control characters');
/** Names and URLs hold no control characters (see hasControl in the domain model). */
const PRINTABLE = explainedPattern('^[^\\u0000-\\u001f\\u007f]+$', 'must not contain control characters');
const PRINTABLE_NOT_BLANK = explainedPattern(
  '^[^\\S\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$',
  'must not be blank or contain control characters',
);
const AccessToken = (description: string) => Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, pattern: TOKEN_PATTERN, description });

const publicFields = {
  id: Type.Integer(),
  name: Type.String(),
  full_name: Type.String(),
  provider: Provider,
  url: Type.String(),
  default_branch: Type.String(),
  created_at: Timestamp,
};

export const Repository = Type.Object(publicFields, { $id: 'Repository' });

/** What administrators see: the public fields plus the configuration, never the token itself. */
export const AdminRepository = Type.Object(
  {
    ...publicFields,
    ticket_prefix: Nullable(Type.String()),
    api_base_url: Nullable(Type.String()),
    has_token: Type.Boolean({ description: 'whether a token for merge requests is stored (it is never returned)' }),
  },
  { $id: 'AdminRepository' },
);

export const MergeRequest = Type.Object(
  {
    id: Type.Integer({ description: "the provider's number of the merge (pull) request in the repository" }),
    title: Type.String(),
    state: Type.Enum(['opened', 'merged', 'closed']),
    source_branch: Type.String(),
    target_branch: Type.String(),
    author: Type.String(),
    url: Type.String(),
    created_at: Timestamp,
  },
  { $id: 'MergeRequest' },
);

export const RepositoryEnvelope = Type.Object({ repository: Type.Ref('Repository') });
export const RepositoryList = Type.Object({ repositories: Type.Array(Type.Ref('Repository')) });
export const AdminRepositoryEnvelope = Type.Object({ repository: Type.Ref('AdminRepository') });
export const AdminRepositoryList = Type.Object({ repositories: Type.Array(Type.Ref('AdminRepository')) });
export const BranchList = Type.Object({ branches: Type.Array(Type.String()) });
export const MergeRequestList = Type.Object({ merge_requests: Type.Array(Type.Ref('MergeRequest')) });

export const RepositoryParams = Type.Object({ ...OrgParams.properties, id: RepositoryId });
export const BranchesQuery = Type.Object(
  { access_token: Type.Optional(AccessToken('a Git provider access token of the caller; never stored or logged')) },
  { additionalProperties: false },
);
export const BranchesHeaders = Type.Object({
  'x-git-access-token': Type.Optional(
    Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, pattern: VISIBLE_ASCII, description: 'alternative to the access_token parameter; wins if both are sent' }),
  ),
});
export const MergeRequestsQuery = Type.Object(
  {
    branch: Type.Optional(Text({ minLength: 1, maxLength: 255, description: 'source branch' })),
    state: Type.Optional(Type.Enum(MERGE_REQUEST_STATES, { default: 'all' })),
  },
  { additionalProperties: false },
);

export const CreateRepositoryBody = Type.Object(
  {
    name: NonBlank({ maxLength: 255 }),
    full_name: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: PRINTABLE_NOT_BLANK,
      description: 'owner/repo (GitHub, Gitea) or group/sub/project (GitLab), 400 otherwise; any name for git',
    }),
    provider: Provider,
    url: Type.String({
      pattern: PRINTABLE,
      minLength: 1,
      maxLength: 2048,
      description: 'clone URL: http(s), ssh:// or user@host:path; for git also file:// or an absolute path',
    }),
    default_branch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: explainedPattern('^[^-\\s~^:?*\\[\\\\\\u0000][^\\s~^:?*\\[\\\\\\u0000]*$', 'must be a branch name (no whitespace, none of ~^:?*[\\, no leading -)'),
        default: 'main',
        description: 'a branch name (no whitespace, no leading -); default main',
      }),
    ),
    ticket_prefix: Type.Optional(TicketPrefix),
    api_base_url: Type.Optional(
      Text({ minLength: 1, maxLength: 2048, description: "the provider's API root, an http(s) URL, e.g. https://gitlab.example.com/api/v4; required for gitea, refused for git (400)" }),
    ),
    token: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, pattern: TOKEN_PATTERN, description: 'used server-side for merge requests; stored encrypted, never returned' }),
    ),
  },
  { additionalProperties: false },
);

export type CreateRepositoryBody = Static<typeof CreateRepositoryBody>;

const createFields = CreateRepositoryBody.properties;
/** A field of the create body as a PATCH field: optional, and without the create default. */
const patchField = <T extends TSchema>(field: T): T => {
  const { default: _default, ...rest } = field as T & { default?: unknown };
  return rest as unknown as T;
};

/** PATCH: any of the fields (not `provider`); `null` clears `ticket_prefix`, `api_base_url` and `token`. */
export const UpdateRepositoryBody = Type.Object(
  {
    name: Type.Optional(createFields.name),
    full_name: Type.Optional(createFields.full_name),
    url: Type.Optional(createFields.url),
    default_branch: Type.Optional(patchField(createFields.default_branch)),
    ticket_prefix: Type.Optional(Nullable(TicketPrefix)),
    api_base_url: Type.Optional(Nullable(createFields.api_base_url)),
    token: Type.Optional(Nullable(createFields.token)),
  },
  { additionalProperties: false, minProperties: 1 },
);
