import { Type } from 'typebox';
import { SCOPES } from '../../protocol/scopes.ts';
import { TICKET_PREFIX_PATTERN } from '../../domain/tickets/model.ts';
import { Id, Nullable, OrgSlugParam, Text, Timestamp } from './common.ts';

export const OrgSlug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,62}$', description: 'lower-case letters, digits and -, 2–63 characters' });
export const TicketPrefix = Type.String({ pattern: TICKET_PREFIX_PATTERN, description: 'upper-case, 1–10 characters, starting with a letter' });

const NetworkAllow = Type.Array(Text({ minLength: 1, maxLength: 260, description: 'host[:port] or *.domain[:port]; the server checks the host name (labels, length)' }), {
  maxItems: 200,
  description: 'hosts its pods may reach through their network walls: host[:port] or *.domain[:port], port default 443 (docs/runners.md "Network")',
});
export const Org = Type.Object(
  { id: Type.Integer(), slug: Type.String(), name: Type.String(), ticket_prefix: Type.String(), network_allow: NetworkAllow, created_at: Timestamp },
  { $id: 'Org' },
);
export const CreateOrgBody = Type.Object(
  { slug: OrgSlug, name: Text({ minLength: 1, maxLength: 255 }), ticket_prefix: Type.Optional(TicketPrefix) },
  { additionalProperties: false },
);

export const UpdateOrgBody = Type.Object(
  { name: Type.Optional(CreateOrgBody.properties.name), ticket_prefix: Type.Optional(TicketPrefix), network_allow: Type.Optional(NetworkAllow) },
  { additionalProperties: false, minProperties: 1 },
);

export const ScopeName = Type.Enum(SCOPES);
export const ApiKey = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({ description: 'the first 12 characters of the key, to recognise it' }),
    scopes: Type.Array(ScopeName),
    expires_at: Nullable(Timestamp),
    last_used_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    user_id: Nullable(Type.Integer({ description: 'the person the key belongs to (what they do with it names them); null: no one' })),
    created_at: Timestamp,
  },
  { $id: 'ApiKey' },
);
export const CreateApiKeyBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 255 }),
    scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
    user_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);

export const User = Type.Object(
  { id: Type.Integer(), name: Type.String(), email: Type.String(), created_at: Timestamp },
  { $id: 'User' },
);
export const CreateUserBody = Type.Object(
  { name: Text({ minLength: 1, maxLength: 255 }), email: Text({ format: 'email', maxLength: 320 }) },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  { name: Type.Optional(CreateUserBody.properties.name), email: Type.Optional(CreateUserBody.properties.email) },
  { additionalProperties: false, minProperties: 1 },
);

export const AdminOrgParams = Type.Object({ org: OrgSlugParam });
export const AdminKeyParams = Type.Object({ org: OrgSlugParam, id: Id });
/** `/orgs/{org}/<resource>/{id}` */
export const AdminIdParams = AdminKeyParams;
