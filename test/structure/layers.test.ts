import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from './import-graph.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The `drover/layers` messages ESLint gives a file at `file` (relative to the repository) with this text. */
async function layerErrors(eslint: ESLint, file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'drover/layers').map((m) => m.message);
}

describe('the layer rule (npm run lint)', () => {
  const eslint = new ESLint({ cwd: ROOT });

  it('fails on an arrow up the layers', async () => {
    const upward: [string, string, RegExp][] = [
      ['src/store/fixture.ts', '../domain/pods/model.ts', /arrow up the layers: store\//],
      ['src/events/fixture.ts', '../domain/context.ts', /arrow up the layers: events\//],
      ['src/protocol/fixture.ts', '../store/db.ts', /arrow up the layers: protocol\//],
      ['src/domain/pods/fixture.ts', '../../api/schemas/pods.ts', /nothing below api\/ imports api\//],
      ['src/scheduler/fixture.ts', '../api/plugins/idempotency.ts', /nothing below api\/ imports api\//],
      ['src/domain/fixture.ts', '../runner/daemon.ts', /runner\/ and domain\/ do not import each other/],
      ['src/runner/fixture.ts', '../domain/context.ts', /runner\/ and domain\/ do not import each other/],
      ['src/runner/fixture.ts', '../store/orgs.ts', /arrow up the layers: runner\//],
      ['src/errors.ts', './domain/context.ts', /kernel files import only/],
      ['src/domain/fixture.ts', '../app.ts', /only the composition root/],
      ['web/src/fixture.ts', '../../src/domain/pods/model.ts', /dashboard may import only/],
    ];
    for (const [file, target, reason] of upward) {
      for (const text of [`import { x } from '${target}';\nexport const y = x;\n`, `export type { X } from '${target}';\n`, `export const load = () => import('${target}');\n`]) {
        const errors = await layerErrors(eslint, file, text);
        expect(errors, `${file} → ${target}`).toHaveLength(1);
        expect(errors[0]).toMatch(reason);
      }
    }
  });

  it('lets arrows point down and rooms share agents/, git/ and protocol/', async () => {
    const downward: [string, string][] = [
      ['src/api/routes/fixture.ts', '../../domain/pods/service.ts'],
      ['src/domain/fixture.ts', '../events/writer.ts'],
      ['src/events/fixture.ts', '../store/db.ts'],
      ['src/store/fixture.ts', '../protocol/enums.ts'],
      ['src/runner/fixture.ts', '../agents/builtin.ts'],
      ['src/domain/fixture.ts', '../git/environment.ts'],
      ['src/cli/fixture.ts', '../protocol/enums.ts'],
      ['src/serve/fixture.ts', '../api/routes/pods.ts'],
      ['web/src/fixture.ts', '../../src/protocol/scopes.ts'],
      ['web/src/fixture.ts', '../../src/client/schema.ts'],
    ];
    for (const [file, target] of downward) {
      expect(await layerErrors(eslint, file, `import { x } from '${target}';\nexport const y = x;\n`), `${file} → ${target}`).toEqual([]);
    }
  });

  it('fails on a file of src/ over 350 lines', async () => {
    const [result] = await eslint.lintText('export const a = 1;\n'.repeat(351), { filePath: path.join(ROOT, 'src/domain/fixture.ts') });
    expect(result.messages.map((m) => m.ruleId)).toContain('max-lines');
  });
});

describe('imports', () => {
  it('form no circle in src/ or web/', () => {
    const graph = importGraph([path.join(ROOT, 'src'), path.join(ROOT, 'web', 'src')]);
    expect(graph.size).toBeGreaterThan(200);
    const cycles = importCycles(graph).map((cycle) => cycle.map((file) => path.relative(ROOT, file)));
    expect(cycles).toEqual([]);
  });

  it('the cycle finder finds a circle', () => {
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']], ['e', ['e']]]);
    expect(importCycles(graph).sort()).toEqual([['a', 'b', 'c'], ['e']]);
  });
});
