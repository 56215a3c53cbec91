import { startTestApp } from '../test/helpers/app.ts';
const t = await startTestApp('sqlite');
for (const url of [t.path('/tickets/ACME-1?foo=1'), t.path('/runners?x=1'), '/healthz?x=1', t.path('/tickets?foo=1')]) {
  const r = await t.request({ method: 'GET', url });
  console.log(url, r.statusCode, r.body.slice(0, 150));
}
await t.close();
