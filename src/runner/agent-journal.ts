import fs from 'node:fs';

/** Past this many lines the journal is rewritten with only the agents still running. */
const COMPACT_AT_LINES = 10_000;

export interface JournalEntry {
  /** The agent's process group (its leader's pid). */
  pid: number;
  podKey: string;
}

/**
 * The agents a runner has running, kept in one append-only file: `<pid> <pod key>` when one
 * starts, `- <pid>` when it has ended. A runner that crashed (kill -9, OOM) leaves its agents
 * running in process groups of their own; the restarted runner reads the journal to end them.
 *
 * One file appended to, not a file per agent: creating and deleting a file costs more than
 * starting the agent itself on some disks (ext4 here: ~0.25 ms per file, more under load).
 */
export class AgentJournal {
  private fd: number | null = null;
  private lines = 0;
  private readonly live = new Map<number, string>();

  constructor(private readonly file: string) {}

  /** Starts a new journal; returns the agents the previous one lists as running. */
  open(): JournalEntry[] {
    const left = readJournal(this.file);
    this.fd = fs.openSync(this.file, 'w', 0o600);
    this.lines = 0;
    return left;
  }

  started(pid: number, podKey: string): void {
    this.live.set(pid, podKey);
    this.append(`${pid} ${podKey}`);
  }

  ended(pid: number): void {
    if (this.live.delete(pid)) this.append(`- ${pid}`);
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private append(line: string): void {
    if (this.fd === null) return;
    fs.writeSync(this.fd, line + '\n');
    if (++this.lines >= COMPACT_AT_LINES) this.compact();
  }

  /** Rewrites the journal with the running agents only (a new file renamed over the old one). */
  private compact(): void {
    const temporary = `${this.file}.tmp`;
    fs.writeFileSync(temporary, [...this.live].map(([pid, key]) => `${pid} ${key}\n`).join(''), { mode: 0o600 });
    fs.renameSync(temporary, this.file);
    this.close();
    this.fd = fs.openSync(this.file, 'a');
    this.lines = this.live.size;
  }
}

function readJournal(file: string): JournalEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const running = new Map<number, string>();
  for (const line of text.split('\n')) {
    const ended = /^- (\d+)$/.exec(line);
    if (ended) {
      running.delete(Number(ended[1]));
      continue;
    }
    const started = /^(\d+) ([a-z0-9-]{1,64})$/.exec(line);
    if (started) running.set(Number(started[1]), started[2]);
  }
  return [...running].map(([pid, podKey]) => ({ pid, podKey }));
}
