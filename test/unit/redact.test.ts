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

  it('a plain query (letters, digits, _ . - in name=value pairs) is written as the general path writes it, redactions included', () => {
    const key = 'drv_' + 'A'.repeat(40);
    // The general path, as it stands for any query: parse, redact, write back with URLSearchParams.
    const general = (query: string) => {
      const redacted = new URLSearchParams();
      for (const [name, value] of new URLSearchParams(query)) redacted.append(name, isSecretParam(name) ? '[redacted]' : value.replace(/drv_A+/, '[redacted]'));
      return redacted.toString();
    };
    for (const query of ['limit=20', 'limit=20&offset=40', 'status=in_progress&type=bug', 'a=&b=1', 'Access-Token=x1&limit=5', 'API.KEY=x&q=y', `note=${key}&limit=1`, 'x-1.y_2=v-1.2_3']) {
      expect(redactUrl(`/p?${query}`), query).toBe(`/p?${general(query)}`);
    }
    expect(redactUrl('/p?Access-Token=S3cret&limit=5')).toBe('/p?Access-Token=%5Bredacted%5D&limit=5');
  });

  it('asked again, a URL is redacted as the first time (only URLs with nothing to redact are remembered)', () => {
    const secret = `/tickets?limit=20&access_token=${SECRET}`;
    const clean = '/tickets?limit=20';
    for (let i = 0; i < 3; i++) {
      expect(redactUrl(secret)).toBe('/tickets?limit=20&access_token=%5Bredacted%5D');
      expect(redactUrl(clean)).toBe(clean);
    }
    // Past the bound the remembered URLs are dropped, and still answered the same.
    for (let i = 0; i < 1500; i++) expect(redactUrl(`/tickets?offset=${i}`)).toBe(`/tickets?offset=${i}`);
    expect(redactUrl(secret)).not.toContain(SECRET);
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
