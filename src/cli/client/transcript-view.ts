/**
 * A pod's transcript on a terminal (docs/cli.md "Pods"; docs/transcripts.md): the agent's text as
 * it wrote it, `$ command` and its output folded, file edits as a short diff, errors marked. Text
 * that comes from the agent is stripped of terminal control sequences first: an agent must not be
 * able to move the cursor, retitle the terminal or hide lines in it.
 */
import { TRANSCRIPT_FORMATS, changedLines, transcriptFormat, transcriptParser, type FileEdit, type TranscriptEntry, type TranscriptFormat, type TranscriptParser } from '../../agents/transcript/index.ts';
import { ORG_BASE, type DroverClient } from '../../client/index.ts';
import { followOutput } from '../../client/sse.ts';
import { RAW_OPTION, escapeJsonControls, stripTerminalControls } from './terminal.ts';
import { UsageError, read, type CommandContext, type OptionSpec, type Output, type Parsed } from './framework.ts';

/** Lines of a command's output shown before folding the middle away, and of other tools' output. */
const SHELL_LINES = 10;
const TOOL_LINES = 3;
const DIFF_LINES = 12;
/** Status entries shown in a row (a stack trace on stderr is one a line); the rest of the run is counted. */
const STATUS_RUN = 8;

const STYLES = { bold: '1', dim: '2', red: '31', green: '32', cyan: '36' } as const;
type Style = keyof typeof STYLES;

const lines = (text: string): string[] => text.replace(/\n+$/, '').split('\n');

/** The lines kept of `all`: everything when few, else the first and last few around a count of what was left out. */
function fold(all: string[], max: number, keepEnd: boolean): { head: string[]; hidden: number; tail: string[] } {
  if (all.length <= max) return { head: all, hidden: 0, tail: [] };
  const tail = keepEnd ? Math.floor(max / 2) : 0;
  const head = max - tail - 1;
  return { head: all.slice(0, head), hidden: all.length - head - tail, tail: tail === 0 ? [] : all.slice(-tail) };
}

const CHANGE_WORDS: Record<FileEdit['change'], string> = { add: 'added', write: 'written', update: 'updated', delete: 'deleted' };

export class TranscriptView {
  /** Calls of file tools: their results say nothing a reader needs unless they failed. */
  private readonly editCalls = new Set<number>();
  private statusRun = 0;
  /** Status entries left out of the current run, and the last of them (shown instead of a count when it is the only one). */
  private hiddenCount = 0;
  private lastHidden = '';

  constructor(
    private readonly out: Output,
    private readonly color: boolean,
  ) {}

  private paint(style: Style, text: string): string {
    return this.color ? `\x1b[${STYLES[style]}m${text}\x1b[0m` : text;
  }

  private write(text: string, style?: Style): void {
    this.out.write(`${style ? this.paint(style, text) : text}\n`);
  }

  /** Each line of `text` after `prefix` (the continuation lines indented to match). */
  private block(prefix: string, text: string, style?: Style): void {
    const indent = ' '.repeat([...prefix].length);
    lines(stripTerminalControls(text)).forEach((line, i) => this.write(`${i === 0 ? prefix : indent}${line}`, style));
  }

  show(entries: TranscriptEntry[]): void {
    for (const entry of entries) this.entry(entry);
  }

  /** The transcript has ended (or paused): says how many status lines were left out of the last run. */
  flush(): void {
    if (this.hiddenCount === 1) this.block('· ', this.lastHidden, 'dim');
    else if (this.hiddenCount > 1) this.write(`· … ${this.hiddenCount} more lines`, 'dim');
    this.statusRun = 0;
    this.hiddenCount = 0;
  }

  entry(entry: TranscriptEntry): void {
    if (entry.kind !== 'status') this.flush();
    switch (entry.kind) {
      case 'text':
        return this.block('', entry.text);
      case 'status':
        if (++this.statusRun <= STATUS_RUN) this.block('· ', entry.text, 'dim');
        else {
          this.hiddenCount++;
          this.lastHidden = entry.text;
        }
        return;
      case 'error':
        return this.block('✗ error: ', entry.text, 'red');
      case 'tool_call':
        return this.call(entry);
      case 'tool_result':
        return this.result(entry);
    }
  }

  private call(entry: TranscriptEntry): void {
    const edits = entry.tool?.edits ?? null;
    if (entry.tool?.command != null) return this.block('$ ', entry.tool.command, 'bold');
    if (edits === null || edits.length === 0) return this.block('→ ', entry.text, 'cyan');
    this.editCalls.add(entry.seq);
    this.block('✎ ', entry.text, 'cyan');
    let budget = DIFF_LINES;
    for (const edit of edits) {
      if (edit.old_text === null && edit.new_text === null) {
        this.write(`    ${stripTerminalControls(edit.path)} (${CHANGE_WORDS[edit.change]})`, 'dim');
        continue;
      }
      const { removed, added } = changedLines(edit);
      this.write(`    ${stripTerminalControls(edit.path)} ${this.paint('green', `+${added.length}`)} ${this.paint('red', `-${removed.length}`)}`);
      const diff = [...removed.map((line) => ['-', line]), ...added.map((line) => ['+', line])];
      for (const [sign, line] of diff.slice(0, Math.max(0, budget))) this.write(`    ${sign} ${stripTerminalControls(line)}`, sign === '+' ? 'green' : 'red');
      if (diff.length > budget) this.write(`    … ${diff.length - Math.max(0, budget)} more changed lines`, 'dim');
      budget -= diff.length;
    }
  }

  private result(entry: TranscriptEntry): void {
    const tool = entry.tool;
    const failed = tool?.is_error === true;
    const ofEdit = tool?.call_seq != null && this.editCalls.has(tool.call_seq);
    if ((ofEdit && !failed) || (entry.text.trim() === '' && !failed)) return;
    const shell = tool?.command != null;
    const { head, hidden, tail } = fold(lines(stripTerminalControls(entry.text)), shell ? SHELL_LINES : TOOL_LINES, shell);
    const gutter = failed ? '  ✗ ' : '  │ ';
    const style: Style = failed ? 'red' : 'dim';
    for (const line of head) this.write(`${gutter}${line}`, style);
    if (hidden > 0) this.write(`  … ${hidden} more line${hidden === 1 ? '' : 's'}`, 'dim');
    for (const line of tail) this.write(`${gutter}${line}`, style);
  }
}

/** The options of the commands that can show a transcript (`pods logs`, `pods run`). */
export const transcriptOptions: Record<string, OptionSpec> = {
  pretty: { type: 'boolean', description: 'show the transcript: what the agent said, its commands and their output, file edits, errors' },
  raw: RAW_OPTION,
  format: { type: 'string', value: 'FORMAT', description: `show the transcript of the output read as ${TRANSCRIPT_FORMATS.join(', ')} (default with --pretty: the pod's agent's)` },
};

/**
 * The format to show a transcript in, or null for the raw output: `--pretty` (or `--format`) asks
 * for it; without them, `--raw` or `--json`, a terminal gets it for the agents that print JSON events.
 */
export async function transcriptWanted(ctx: CommandContext, p: Parsed, agentSlug: () => Promise<string>): Promise<TranscriptFormat | null> {
  const format = read.oneOf(p, 'format', TRANSCRIPT_FORMATS);
  if (read.flag(p, 'pretty') && read.flag(p, 'raw')) throw new UsageError('--pretty and --raw exclude each other');
  if (format || read.flag(p, 'pretty')) return format ?? transcriptFormat(await agentSlug());
  const terminal = (ctx.out as { isTTY?: boolean }).isTTY === true;
  if (read.flag(p, 'raw') || ctx.json || !terminal) return null;
  const own = transcriptFormat(await agentSlug());
  return own === 'plain' ? null : own;
}

/** The agent of a pod, asked of the server. */
export async function podAgent(client: DroverClient, key: string): Promise<string> {
  return (await client.call(client.api.GET(`${ORG_BASE}/pods/{key}`, { params: { path: { ...client.path, key } } }))).data.pod.agent_slug;
}

/** Shows entries as they come; `last` marks the end of the transcript. */
function viewOf(ctx: CommandContext): (entries: TranscriptEntry[], last?: boolean) => void {
  if (ctx.json) return (entries) => entries.forEach((entry) => ctx.out.write(`${escapeJsonControls(JSON.stringify(entry))}\n`));
  const view = new TranscriptView(ctx.out, (ctx.out as { isTTY?: boolean }).isTTY === true && !ctx.env.NO_COLOR);
  return (entries, last = false) => {
    view.show(entries);
    if (last) view.flush();
  };
}

/** `pods logs --pretty`: the transcript of the kept output (`tail` bytes of it: the entries of its last lines). */
export async function printTranscript(ctx: CommandContext, client: DroverClient, key: string, format: TranscriptFormat, tail?: number): Promise<void> {
  const show = viewOf(ctx);
  let after: number | undefined;
  for (;;) {
    const query = { format, limit: 5000, ...(after === undefined ? {} : { after }) };
    const { data } = await client.call(client.api.GET(`${ORG_BASE}/pods/{key}/transcript`, { params: { path: { ...client.path, key }, query } }));
    const last = !data.has_more || data.last_seq === null;
    show(tail === undefined ? data.entries : data.entries.filter((entry) => entry.seq >= data.total_bytes - tail), last);
    if (last || data.last_seq === null) return;
    after = data.last_seq;
  }
}

/**
 * `pods logs -f` and `pods run --follow` with a transcript: the output stream read by the parser as
 * it comes, from `offset`; a jump in the stream (a client that fell behind what is kept) starts a
 * new parser there. Answers the stream's end, as `streamOutput` does for the raw output.
 */
export async function followTranscript(ctx: CommandContext, client: DroverClient, key: string, format: TranscriptFormat, offset = 0): Promise<{ status: string; exit_code: number | null } | null> {
  const show = viewOf(ctx);
  const retry = (reason: string, ms: number) => ctx.err.write(`drover: ${reason}; reconnecting in ${ms / 1000} s\n`);
  let parser: TranscriptParser | null = null;
  let next = offset;
  for await (const event of followOutput(client, key, { offset, signal: ctx.signal, onRetry: retry })) {
    if (event.type === 'end') {
      show(parser?.end() ?? [], true);
      return event;
    }
    if (parser === null || event.offset !== next) parser = transcriptParser(format, { offset: event.offset, midLine: event.offset > 0 });
    next = event.offset + new TextEncoder().encode(event.data).length;
    show(parser.write(event.data));
  }
  return null;
}
