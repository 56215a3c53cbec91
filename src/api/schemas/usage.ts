import { Type } from 'typebox';
import { USAGE_GROUPINGS } from '../../store/model-calls.ts';
import { Nullable } from './common.ts';

const IsoDate = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'an ISO date, UTC (2026-11-27); `to` includes its day' });

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(IsoDate),
    to: Type.Optional(IsoDate),
    group_by: Type.Optional(Type.Enum([...USAGE_GROUPINGS], { description: 'default `day` (UTC)' })),
  },
  { additionalProperties: false },
);

const sums = {
  input_tokens: Nullable(Type.Integer({ description: 'input neither read from nor written to a prompt cache' })),
  output_tokens: Nullable(Type.Integer()),
  cache_read_tokens: Nullable(Type.Integer()),
  cache_write_tokens: Nullable(Type.Integer()),
  cost_usd: Nullable(Type.Number()),
  pods: Type.Integer({ description: 'pods created in the range that fall in the group' }),
};

export const UsageReport = Type.Object(
  {
    group_by: Type.Enum([...USAGE_GROUPINGS]),
    from: Type.String(),
    to: Type.String(),
    groups: Type.Array(Type.Object({ key: Nullable(Type.String({ description: 'the day (YYYY-MM-DD), agent slug, loop slug, ticket slug or repository name; null: pods without one' })), ...sums })),
    total: Type.Object(sums),
  },
  { description: "what the organization's pods created in [from, to) used: the relays' exact sums, or the agent's own report for pods no relay saw" },
);
