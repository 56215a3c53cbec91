/** `GET /usage` (the relay work): cost and tokens grouped by day, agent, loop, ticket, repository or person. */
import { api, query } from '../api.ts';

export const GROUPS = [
  { value: 'day', label: 'Day' },
  { value: 'agent', label: 'Agent' },
  { value: 'loop', label: 'Loop' },
  { value: 'user', label: 'Person' },
  { value: 'repository', label: 'Repository' },
  { value: 'ticket', label: 'Ticket' },
] as const;
export type Group = (typeof GROUPS)[number]['value'];

export interface UsageRow {
  key: string | number | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  pods: number;
}

export interface UsageReport {
  groups: UsageRow[];
  total: Omit<UsageRow, 'key'> & { key?: unknown };
}

/** An ISO date `days` before today (UTC). */
export const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

export const readUsage = (group: Group, from?: string, to?: string) => api<UsageReport>('GET', `/usage${query({ group_by: group, from, to })}`);
