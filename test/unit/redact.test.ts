/**
 * What of a request URL reaches the log (src/api/plugins/redact.ts): secret query parameters are
 * recognised after normalising their names, however they are spelled or encoded, and Drover's own
 * credentials by their shape anywhere in the URL.
 */
import { describe, expect, it } from 'vitest';
import { isSecretParam, normaliseParamName, redactUrl } from '../../src/api/plugins/redact.ts';

const SECRET = 'ghp_S3cretValue';

describe('redactUrl', () => {
  it.each([
    'access_token',
    'access_token%20',
    '%20access_token',
    'access_token%00',
    'access_token%0A',
    'access_token+',
    'ACCESS_TOKEN',
    'Access-Token',
    'accessToken',
    'access.token',
    'access%5Ftoken',
    'access%255Ftoken',
    'access_token%2500',
    'access_token[]',
    '%EF%BD%81ccess_token', // full-width ａ
    'token',
    'api_key',
    'apiKey',
    'key',
    'secret',
    'client_secret',
    'password',
    'X-Git-Access-Token',
    'private_key',
  ])('?%s=… is redacted', (name) => {
    const line = redactUrl(`/api/v1/ext/orgs/acme/repositories/1/branches?${name}=${SECRET}&limit=5`);
    expect(line).not.toContain(SECRET);
    expect(line).toContain('redacted');
    expect(line).toContain('limit=5');
  });

  it.each(['limit', 'offset', 'status', 'labels', 'q', 'state', 'branch'])('?%s=… is kept', (name) => {
    expect(redactUrl(`/x?${name}=visible`)).toBe(`/x?${name}=visible`);
  });

  it("Drover's own credentials are redacted wherever they stand", () => {
    const key = 'drv_' + 'A'.repeat(40);
    for (const url of [`/x?note=${key}`, `/x/${key}/y`, `/x?a=1&b=drvpod_${'b'.repeat(40)}`, `/x?c=whsec_${'c'.repeat(32)}`, `/x?d=drvreg_${'d'.repeat(40)}`]) {
      const line = redactUrl(url);
      expect(line, url).not.toMatch(/AAAAAAAA|bbbbbbbb|cccccccc|dddddddd/);
    }
  });

  it('a URL without a query is unchanged', () => {
    expect(redactUrl('/api/v1/ext/orgs/acme/tickets')).toBe('/api/v1/ext/orgs/acme/tickets');
  });

  it('names are normalised: decoded until stable, NFKC, lower case, letters and digits only', () => {
    expect(normaliseParamName('Access%255F%54oken%00')).toBe('accesstoken');
    expect(normaliseParamName('%zz')).toBe('zz');
    expect(isSecretParam('monkey')).toBe(true); // errs on the side of hiding
    expect(isSecretParam('keyword')).toBe(false);
  });
});
