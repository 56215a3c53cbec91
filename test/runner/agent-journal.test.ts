/**
 * The runner's agent journal (src/runner/agent-journal.ts): the agents a runner has running, kept
 * across a crash in one append-only file of `<pid> <pod key>` / `- <pid>` lines, read back by the
 * next open(), and compacted to the running agents past 10,000 lines.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentJournal } from '../../src/runner/agent-journal.ts';

describe('AgentJournal', () => {
  let dir: string;
  let file: string;
  const journals: AgentJournal[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-journal-'));
    file = path.join(dir, 'agents.journal');
  });
  afterEach(() => {
    for (const journal of journals.splice(0)) journal.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const journal = () => {
    const created = new AgentJournal(file);
    journals.push(created);
    return created;
  };
  const lines = () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

  it('open() on a missing file returns nothing and creates an empty journal', () => {
    expect(journal().open()).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('the next open() returns the agents started and not ended, and starts a fresh journal', () => {
    const first = journal();
    first.open();
    first.started(4101, 'p-alpha');
    first.started(4102, 'p-beta');
    first.started(4103, 'p-gamma');
    first.ended(4102);
    first.ended(9999); // never started: not written
    first.close();
    expect(lines()).toEqual(['4101 p-alpha', '4102 p-beta', '4103 p-gamma', '- 4102']);

    expect(journal().open()).toEqual([
      { pid: 4101, podKey: 'p-alpha' },
      { pid: 4103, podKey: 'p-gamma' },
    ]);
    // That open() began a new journal: nothing is left for the one after it.
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    expect(journal().open()).toEqual([]);
  });

  it('ignores lines that are not journal entries', () => {
    fs.writeFileSync(
      file,
      [
        '12 p-kept',
        'garbage',
        '13 P-UPPER-CASE',
        '14 p-two words',
        '15',
        'abc p-not-a-pid',
        '- 12x', // not an end of 12
        '-12',
        `16 p-${'x'.repeat(70)}`,
        '- 99', // ends nothing known
        '',
        '17 p-also-kept',
        '18 p-ended',
        '- 18',
      ].join('\n'),
    );
    expect(journal().open()).toEqual([
      { pid: 12, podKey: 'p-kept' },
      { pid: 17, podKey: 'p-also-kept' },
    ]);
  });

  it('after 10,000 lines rewrites the file with exactly the running agents, and goes on appending to it', () => {
    const writer = journal();
    writer.open();
    writer.started(1, 'p-one');
    writer.started(2, 'p-two');
    writer.started(3, 'p-three');
    writer.ended(2);
    // 4 lines so far; 4,997 short-lived agents add 9,994: 9,998 lines, one below the threshold...
    for (let i = 0; i < 4_997; i++) {
      writer.started(10_000 + i, `p-short-${i}`);
      writer.ended(10_000 + i);
    }
    writer.started(4, 'p-four');
    expect(lines()).toHaveLength(9_999);
    // ...and the 10,000th line triggers the rewrite.
    writer.started(5, 'p-five');
    expect(lines()).toEqual(['1 p-one', '3 p-three', '4 p-four', '5 p-five']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);

    writer.ended(3);
    writer.started(6, 'p-six');
    expect(lines()).toEqual(['1 p-one', '3 p-three', '4 p-four', '5 p-five', '- 3', '6 p-six']);
    writer.close();

    expect(journal().open()).toEqual([
      { pid: 1, podKey: 'p-one' },
      { pid: 4, podKey: 'p-four' },
      { pid: 5, podKey: 'p-five' },
      { pid: 6, podKey: 'p-six' },
    ]);
  });
});
