/**
 * Whether a request's `Accept-Encoding` takes gzip (RFC 9110, section 12.5.3): named, or `*`, with a
 * quality above 0. `gzip;q=0` refuses it; no header at all means the client asked for nothing,
 * and is answered as it is (the CLI sends none: it decompresses nothing).
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  let star: boolean | null = null;
  for (const part of String(header).split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)).find((m) => m !== null);
    const accepted = !q || Number(q[1]) > 0;
    if (coding.trim() === 'gzip' || coding.trim() === 'x-gzip') return accepted;
    if (coding.trim() === '*') star = accepted;
  }
  return star === true;
}
