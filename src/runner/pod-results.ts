import fs from 'node:fs';
import path from 'node:path';
import { addUsage, emptyUsage, usageSince, USAGE_FIELDS, type AgentReport, type AgentUsage } from '../agents/output/index.ts';
import type { ModelCall } from '../protocol/runner-link.ts';

/**
 * The running totals of sessions whose CLI reports usage per session, not per run (Codex), so a
 * run that resumes one counts only what it added. Pods of a persistent loop keep them in a file of
 * the runner's (the loop's next run resumes on this runner, where its sandbox lives); other pods
 * in memory, for their own autopilot iterations.
 */
export class SessionTotals {
  private readonly totals = new Map<string, AgentUsage>();

  constructor(private readonly file: string | null) {
    if (!file) return;
    try {
      const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, AgentUsage>;
      for (const [id, usage] of Object.entries(stored)) this.totals.set(id, usage);
    } catch {
      // None yet (or unreadable: the next total starts it again).
    }
  }

  /** The file of a persistent loop's sessions under the runner's work dir. */
  static forPersistentKey(workDir: string, key: string | null): SessionTotals {
    return new SessionTotals(key === null ? null : path.join(workDir, 'session-usage', `${key.replace(/[^A-Za-z0-9._-]/g, '_')}.json`));
  }

  /** Records `total` as the session's total now; returns the total seen before (null: none). */
  swap(sessionId: string, total: AgentUsage): AgentUsage | null {
    const before = this.totals.get(sessionId) ?? null;
    this.totals.set(sessionId, total);
    if (this.file) {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const temporary = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, JSON.stringify(Object.fromEntries(this.totals)));
      fs.renameSync(temporary, this.file);
    }
    return before;
  }
}

/** What a pod reports at its end: the last final message and session id, the usage summed over its runs of the agent. */
export class PodResults {
  private result: string | null = null;
  private sessionId: string | null = null;
  private usage: AgentUsage = emptyUsage();
  private relayed: AgentUsage | null = null;

  constructor(private readonly sessions: SessionTotals) {}

  /** One run of the agent (an autopilot iteration) ended with this report. */
  add(report: AgentReport): void {
    const usage = { ...report.usage };
    const totals = report.sessionTotals ? USAGE_FIELDS : (report.sessionTotalFields ?? []);
    if (totals.length > 0 && report.session_id !== null) {
      const before = this.sessions.swap(report.session_id, report.usage);
      const since = before ? usageSince(report.usage, before) : null;
      if (since) for (const field of totals) usage[field] = since[field];
    }
    this.usage = addUsage(this.usage, usage);
    if (report.result !== null) this.result = report.result;
    if (report.session_id !== null) this.sessionId = report.session_id;
  }

  /**
   * A call the runner's relay passed for this pod. Once the relay has seen calls, the pod's usage
   * is their exact sum: the agent's own report covers the same calls (turns excepted, which only
   * the agent counts as it means them).
   */
  addRelayed(call: ModelCall): void {
    const { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd } = call;
    this.relayed = addUsage(this.relayed ?? emptyUsage(), { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, turns: 1 });
  }

  get(): { result: string | null; session_id: string | null; usage: AgentUsage } {
    const usage = this.relayed ? { ...this.relayed, turns: this.usage.turns ?? this.relayed.turns } : { ...this.usage };
    return { result: this.result, session_id: this.sessionId, usage };
  }
}
