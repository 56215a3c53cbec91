/**
 * What an agent in autopilot is told (src/agents/autopilot.ts, docs/agents.md "Autopilot"): the task
 * comes first and the way to report follows; later iterations continue the agent's own session
 * with a short prompt, or give the task again to an agent that cannot resume; shell and custom
 * agents get their prompt untouched. The example command the agent is shown is run for real.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { autopilotPrompt, continuationPrompt, firstPrompt, reportInstructions, restartPrompt, takesInstructions } from '../../src/agents/autopilot.ts';
import { BUILTIN_AGENT_SLUGS } from '../../src/agents/builtin.ts';

const TASK = 'Fix the failing test in src/util.ts.';
const first = { iteration: 1, maxIterations: 10, previous: null };
const second = { iteration: 2, maxIterations: 10, previous: { status: 'continue', summary: 'Found the bug; the fix is half done.' } };

describe('autopilot prompts', () => {
  it('iteration 1: the task verbatim first, then how to report, with the iteration and the three statuses', () => {
    const prompt = firstPrompt(TASK, first);
    expect(prompt.startsWith(`${TASK}\n\n---\n`)).toBe(true);
    expect(prompt).toContain('iteration 1 of at most 10');
    for (const status of ['"done"', '"continue"', '"failed"']) expect(prompt).toContain(status);
    expect(prompt).toContain('DROVER_STATUS_FILE');
    expect(prompt).not.toContain('report_status');
    expect(prompt).not.toContain('last iteration');
  });

  it('the example command it shows writes a status the runner reads as done', () => {
    const line = reportInstructions(first)
      .split('\n')
      .find((l) => l.includes('printf'))!
      .trim();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-autopilot-'));
    try {
      const file = path.join(dir, 'status.json');
      execFileSync('bash', ['-c', line], { env: { PATH: process.env.PATH, DROVER_STATUS_FILE: file } });
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ status: 'done', summary: 'Added the tests; they pass.' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the last iteration says so: report done or failed', () => {
    expect(firstPrompt(TASK, { iteration: 3, maxIterations: 3, previous: null })).toContain('This is the last iteration: report "done" or "failed".');
    expect(continuationPrompt({ ...second, iteration: 10 })).toContain('This is the last iteration');
  });

  it('a continuation is short: no task, the previous report, how to report again', () => {
    const prompt = continuationPrompt(second);
    expect(prompt).toBe(
      'Continue the task (Drover autopilot, iteration 2 of at most 10). Your last report was "continue": "Found the bug; the fix is half done." ' +
        'Pick up where you left off. Before you stop, report again: write {"status": …, "summary": …} to the file "$DROVER_STATUS_FILE", with "status" one of "done", "continue", "failed".',
    );
    expect(prompt).not.toContain(TASK);
    expect(continuationPrompt({ ...second, previous: null })).toContain('You stopped without reporting a status.');
  });

  it('a restart (an agent that cannot resume) gives the task again, says earlier iterations worked here, and how to report', () => {
    const prompt = restartPrompt(TASK, second);
    expect(prompt.startsWith(`${TASK}\n\nNote: earlier iterations of this task ran in this same workspace. Your last report was "continue"`)).toBe(true);
    expect(prompt).toContain('iteration 2 of at most 10');
    expect(prompt).toContain('DROVER_STATUS_FILE');
  });

  it('a very long summary is cut in what the agent is told', () => {
    const prompt = continuationPrompt({ ...second, previous: { status: 'continue', summary: 'x'.repeat(5000) } });
    expect(prompt.length).toBeLessThan(900);
  });

  it('the MCP tool report_status is one more way, offered only when asked for', () => {
    const both = reportInstructions({ ...first, ways: ['status_file', 'mcp_tool'] });
    expect(both).toContain('DROVER_STATUS_FILE');
    expect(both).toContain('report_status');
    expect(continuationPrompt({ ...second, ways: ['mcp_tool'] })).toContain('call the tool report_status');
  });

  it('which agents get instructions: the model-driven built-ins; shell (a bash script) and custom agents get their prompt unchanged', () => {
    expect(BUILTIN_AGENT_SLUGS.filter((slug) => takesInstructions(slug, false))).toEqual(['claude-code', 'codex', 'gemini-cli', 'aider', 'opencode']);
    expect(takesInstructions('claude-code', true)).toBe(false);
    const script = 'echo hi > "$DROVER_STATUS_FILE"';
    for (const turn of [first, second]) {
      expect(autopilotPrompt({ slug: 'shell', custom: false }, script, turn, false)).toBe(script);
      expect(autopilotPrompt({ slug: 'my-agent', custom: true }, script, turn, true)).toBe(script);
    }
  });

  it('autopilotPrompt: iteration 1 the task with instructions; later a continuation when resumed, else a restart', () => {
    const claude = { slug: 'claude-code', custom: false };
    expect(autopilotPrompt(claude, TASK, first, false)).toBe(firstPrompt(TASK, first));
    expect(autopilotPrompt(claude, TASK, second, true)).toBe(continuationPrompt(second));
    expect(autopilotPrompt({ slug: 'aider', custom: false }, TASK, second, false)).toBe(restartPrompt(TASK, second));
  });
});
