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

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const shown = path.replace(OWN_CREDENTIAL, REDACTED);
  if (q < 0) return shown;
  const params = new URLSearchParams(url.slice(q + 1));
  const redacted = new URLSearchParams();
  for (const [name, value] of params) {
    redacted.append(name, isSecretParam(name) ? REDACTED : value.replace(OWN_CREDENTIAL, REDACTED));
  }
  return `${shown}?${redacted.toString()}`;
}
