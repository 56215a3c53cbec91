import fc from 'fast-check';
const d = JSON.parse((await import('node:fs')).readFileSync('/work/wt/cli/docs/openapi.json','utf8'));
const pats = new Set<string>();
JSON.stringify(d, (k, v) => { if (k === 'pattern') pats.add(v); return v; });
for (const p of pats) {
  try {
    const re = new RegExp(p, 'u');
    const xs = fc.sample(fc.stringMatching(re), { numRuns: 5, seed: 1 });
    console.log(p.slice(0,60), xs.map(x=>JSON.stringify(x).slice(0,40)).join(' | '), xs.every(x=>re.test(x)));
  } catch (e) { console.log('ERR', p, (e as Error).message); }
}
