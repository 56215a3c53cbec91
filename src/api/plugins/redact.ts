/**
 * What of a request URL may reach a log line. Query parameter names are normalised before they
 * are matched (percent-decoded until stable, NFKC, lower-case, letters and digits only), so
 * `access_token%20`, `access_token%00`, `ACCESS-TOKEN`, `access%255Ftoken` or a full-width
 * `ａｃｃｅｓｓ_token` are recognised as what a lenient parser would take them for. Drover's own
 * credentials are also recognised by their shape, wherever they stand in the URL.
 */
const SECRET_NAME = /token|secret|passw|apikey|accesskey|credential|signature|auth|key$/;
const OWN_CREDENTIAL = /\b(?:drv(?:pod|run|reg|adm)?|whsec)_[A-Za-z0-9+/=%]{8,}/g;
const REDACTED = '[redacted]';

export function normaliseParamName(raw: string): string {
  let name = raw;
  for (let i = 0; i < 5; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      break;
    }
    if (decoded === name) break;
    name = decoded;
  }
  return name.normalize('NFKC').toLowerCase().replace(/[^a-z0-9]/g, '');
}

export const isSecretParam = (name: string): boolean => SECRET_NAME.test(normaliseParamName(name));

/**
 * A query of plain `name=value` pairs (letters, digits, `_`, `.`, `-`): nothing to decode, and
 * written back exactly as URLSearchParams would write it, so the pairs are checked as they stand
 * (every request logs its URL; most queries look like this).
 */
const PLAIN_QUERY = /^[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]*(?:&[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]*)*$/;
/** REDACTED as URLSearchParams writes it. */
const REDACTED_IN_QUERY = encodeURIComponent(REDACTED);

function redactPlainQuery(query: string): string {
  let out = '';
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const shown = SECRET_NAME.test(name.toLowerCase().replace(/[^a-z0-9]/g, '')) ? REDACTED_IN_QUERY : pair.slice(eq + 1).replace(OWN_CREDENTIAL, REDACTED_IN_QUERY);
    out += `${out === '' ? '' : '&'}${name}=${shown}`;
  }
  return out;
}

/**
 * URLs whose redaction left them as they were (nothing secret in them: they are logged as they
 * stand), so a URL asked for again is not parsed again. Only such URLs are kept, so nothing kept
 * here is a secret; bounded, emptied when full.
 */
const CLEAN_URLS = new Set<string>();
const CLEAN_URLS_MAX = 1000;
const CLEAN_URL_MAX_LENGTH = 512;

export function redactUrl(url: string): string {
  if (CLEAN_URLS.has(url)) return url;
  const shown = redactUrlOnce(url);
  if (shown === url && url.length <= CLEAN_URL_MAX_LENGTH) {
    if (CLEAN_URLS.size >= CLEAN_URLS_MAX) CLEAN_URLS.clear();
    CLEAN_URLS.add(url);
  }
  return shown;
}

function redactUrlOnce(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const shown = path.replace(OWN_CREDENTIAL, REDACTED);
  if (q < 0) return shown;
  const query = url.slice(q + 1);
  if (PLAIN_QUERY.test(query)) return `${shown}?${redactPlainQuery(query)}`;
  const params = new URLSearchParams(query);
  const redacted = new URLSearchParams();
  for (const [name, value] of params) {
    redacted.append(name, isSecretParam(name) ? REDACTED : value.replace(OWN_CREDENTIAL, REDACTED));
  }
  return `${shown}?${redacted.toString()}`;
}
