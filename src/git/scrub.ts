/** Removes the token and any URL user-info from a message that may come from a library or a child process. */
export function scrub(message: string, token: string): string {
  let out = message.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@'"]*@/gi, '$1***@');
  if (token.length > 0) out = out.split(token).join('***');
  // Long messages (HTML error pages, stack-like dumps) help nobody in an API error.
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}
