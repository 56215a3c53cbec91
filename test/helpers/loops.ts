/**
 * A loop of the cron tests: agent `shell`, prompt `true`, due every minute, policy `skip` with one
 * run at a time (the 500-loops burst's shape, bench/loops.ts), for `createLoop`.
 */
export const minutelyShellLoop = (slug: string, name: string) => ({
  name,
  slug,
  prompt_template: 'true',
  agent_slug: 'shell',
  execution_mode: 'direct' as const,
  cron_expression: '* * * * *',
  concurrency_policy: 'skip' as const,
  max_concurrent_runs: 1,
});
