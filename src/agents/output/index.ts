export { outputReader, parseAgentOutput, MAX_LINE_CHARS, type OutputReader } from './reader.ts';
export {
  RESULT_MAX_BYTES,
  USAGE_FIELDS,
  addUsage,
  emptyReport,
  emptyUsage,
  truncateUtf8,
  usageSince,
  type AgentReport,
  type AgentUsage,
  type UsageField,
} from './usage.ts';
