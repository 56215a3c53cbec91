/**
 * What a pod plants in its HOME where the runner merges agent configuration (docs/runners.md
 * "What the runner touches in a pod"): a symlink to a missing path and to a root-only file, a
 * FIFO, a link to /dev/zero, a linked directory. Real files, a real FIFO, the real wireMcp for
 * gemini-cli and opencode: nothing outside the HOME is created or changed, nothing blocks, and the
 * agent runs without the MCP server, saying why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wireMcp } from '../../src/runner/mcp-wiring.ts';
import { PodTreeError, readPodFile, writePodFile } from '../../src/runner/pod-tree.ts';
import { PLANTS, plant } from '../helpers/plant.ts';

const CONFIG_FILES = { 'gemini-cli': '.gemini/settings.json', opencode: '.config/opencode/opencode.json' } as const;
const ENV = { DROVER_API_URL: 'http://127.0.0.1:1', DROVER_POD_TOKEN: 'drvpod_x', DROVER_POD_KEY: 'p-x', DROVER_ORG: 'o' };

describe('the runner in a pod-writable tree', () => {
  let scratch: string;
  let home: string;
  let outside: string;
  let secret: string;

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-pod-tree-'));
    home = path.join(scratch, 'home');
    outside = path.join(scratch, 'outside');
    fs.mkdirSync(home);
    fs.mkdirSync(outside);
    secret = path.join(outside, 'root-only.json');
    fs.writeFileSync(secret, '{"secret": "root only"}\n', { mode: 0o600 });
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  const snapshot = () => ({ files: fs.readdirSync(outside).sort(), secret: fs.readFileSync(secret, 'utf8') });

  for (const slug of ['gemini-cli', 'opencode'] as const) {
    for (const kind of PLANTS) {
      it(`${slug}: ${kind} at ${CONFIG_FILES[slug]} → nothing changed outside HOME, no hang, no MCP server`, async () => {
        plant(path.join(home, CONFIG_FILES[slug]), kind, outside, secret);
        const before = snapshot();
        const wired = await wireMcp(slug, home, ENV, true);
        expect(wired.args).toEqual([]);
        expect(wired.skipped).toMatch(/in the pod's HOME, so the drover MCP server was not added to it/);
        expect(snapshot()).toEqual(before);
        expect(fs.existsSync(path.join(outside, 'created-by-runner.json'))).toBe(false);
      });
    }
    it(`${slug}: a plain file is merged (written by rename) and a missing one created`, async () => {
      const file = path.join(home, CONFIG_FILES[slug]);
      expect((await wireMcp(slug, home, ENV, true)).skipped).toBeNull();
      const first = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(JSON.stringify(first)).toContain('drover');
      fs.writeFileSync(file, JSON.stringify({ ...first, kept: 'yes' }));
      expect((await wireMcp(slug, home, ENV, true)).skipped).toBeNull();
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ kept: 'yes' });
      expect(fs.readdirSync(path.dirname(file)).filter((name) => name.includes('drover-'))).toEqual([]);
    });
  }

  it('readPodFile: size cap, missing file, no way out with ..', () => {
    fs.writeFileSync(path.join(home, 'big'), 'x'.repeat(2000));
    expect(() => readPodFile(home, 'big', 1000)).toThrow(PodTreeError);
    expect(readPodFile(home, 'big', 4000)).toHaveLength(2000);
    expect(readPodFile(home, 'a/b/missing', 10)).toBeNull();
    expect(() => readPodFile(home, '../outside/root-only.json', 1000)).toThrow(PodTreeError);
    expect(() => writePodFile(home, '../outside/x', 'x')).toThrow(PodTreeError);
    expect(fs.existsSync(path.join(outside, 'x'))).toBe(false);
  });
});
