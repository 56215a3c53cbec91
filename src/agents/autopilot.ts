/**
 * What an agent in autopilot is told (docs/agents.md "Autopilot"): every wording of
 * it is here. The ways to report are entries of `REPORT_WAYS`, chosen by the caller: the status
 * file always, and the `drover` MCP server's `report_status` tool (docs/mcp.md) for agents that
 * have that server (the runner's supervisor decides).
 *
 * - Iteration 1: the task, then how to report.
 * - Later iterations of an agent that can resume: its own session continues, with a short
 *   continuation prompt (the task and the instructions are in the session already).
 * - Later iterations of an agent that cannot resume (or reported no session): the task again, with
 *   a note that earlier iterations worked in this workspace, then how to report.
 *
 * Agents whose prompt is not read by a model get their prompt unchanged: `shell` (the prompt is a
 * bash script) and custom agents (their prompt may be anything their program expects). They still
 * get `DROVER_STATUS_FILE` and `DROVER_ITERATION` in their environment.
 */
import { builtinAgent } from './builtin.ts';

/** How an agent can report its status. */
export type ReportWay = 'status_file' | 'mcp_tool';

export const STATUS_VALUES = ['done', 'continue', 'failed'] as const;

/** The ways, in the words the agent reads. */
const REPORT_WAYS: Record<ReportWay, { full: string; short: string }> = {
  status_file: {
    full:
      'write one line of JSON to the file named by the environment variable DROVER_STATUS_FILE, for example:\n' +
      `  printf '%s\\n' '{"status": "done", "summary": "Added the tests; they pass."}' > "$DROVER_STATUS_FILE"`,
    short: 'write {"status": …, "summary": …} to the file "$DROVER_STATUS_FILE"',
  },
  mcp_tool: {
    full: 'call the tool report_status of the drover MCP server with {"status": …, "summary": …}',
    short: 'call the tool report_status {"status": …, "summary": …}',
  },
};

export interface AutopilotIteration {
  /** 1, 2, … */
  iteration: number;
  maxIterations: number;
  /** What the previous iteration reported, or null (iteration 1, or it reported nothing). */
  previous: { status: string; summary: string | null } | null;
  /** How the agent can report; default: the status file. */
  ways?: readonly ReportWay[];
}

function ways(turn: AutopilotIteration, form: 'full' | 'short'): string {
  return (turn.ways ?? ['status_file']).map((way) => REPORT_WAYS[way][form]).join(form === 'full' ? '\nor ' : ', or ');
}

const quoted = (text: string) => JSON.stringify(text.length > 500 ? `${text.slice(0, 500)}…` : text);

function lastReport(turn: AutopilotIteration): string {
  if (!turn.previous) return 'You stopped without reporting a status.';
  const { status, summary } = turn.previous;
  return summary ? `Your last report was "${status}": ${quoted(summary)}` : `Your last report was "${status}".`;
}

/** How to report, as the first iteration (and every restart) gets it. */
export function reportInstructions(turn: AutopilotIteration): string {
  const last = turn.iteration >= turn.maxIterations ? ' This is the last iteration: report "done" or "failed".' : '';
  return [
    '---',
    `Drover runs this task unattended, in autopilot: this is iteration ${turn.iteration} of at most ${turn.maxIterations}, each in the same workspace.${last}`,
    'Before you stop, report how far the task is:',
    '- "done": the task is complete.',
    '- "continue": you made progress and more work remains; you will be run again to go on.',
    '- "failed": the task cannot be completed; say why in the summary.',
    `To report, ${ways(turn, 'full')}`,
    'The summary is one or two sentences. If you stop without reporting, you will be run again.',
  ].join('\n');
}

/** Iteration 1 (and a restart): the task, then how to report. */
export function firstPrompt(task: string, turn: AutopilotIteration): string {
  return `${task}\n\n${reportInstructions(turn)}`;
}

/** A later iteration that continues the agent's own session. */
export function continuationPrompt(turn: AutopilotIteration): string {
  const last = turn.iteration >= turn.maxIterations ? ' This is the last iteration: report "done" or "failed".' : '';
  return (
    `Continue the task (Drover autopilot, iteration ${turn.iteration} of at most ${turn.maxIterations}). ${lastReport(turn)} ` +
    `Pick up where you left off.${last} Before you stop, report again: ${ways(turn, 'short')}, with "status" one of ${STATUS_VALUES.map((s) => `"${s}"`).join(', ')}.`
  );
}

/** A later iteration of an agent that cannot continue its session: the task again, with what came before. */
export function restartPrompt(task: string, turn: AutopilotIteration): string {
  const note =
    `Note: earlier iterations of this task ran in this same workspace. ${lastReport(turn)} ` +
    'Look at what is already there before you start, and continue from it.';
  return `${task}\n\n${note}\n\n${reportInstructions(turn)}`;
}

/** Whether the agent's prompt is read by a model, so autopilot instructions can be added to it. */
export function takesInstructions(slug: string, custom: boolean): boolean {
  return !custom && builtinAgent(slug) !== null && slug !== 'shell';
}

/**
 * The prompt of one autopilot iteration: `resumes` says the agent continues its own session of the
 * previous iteration.
 */
export function autopilotPrompt(agent: { slug: string; custom: boolean }, task: string, turn: AutopilotIteration, resumes: boolean): string {
  if (!takesInstructions(agent.slug, agent.custom)) return task;
  if (turn.iteration === 1) return firstPrompt(task, turn);
  return resumes ? continuationPrompt(turn) : restartPrompt(task, turn);
}
