/**
 * A URL as it may be shown in a log line, an error or the status: without its password and its query (where tokens
 * and connection options go); the user, host, port and path stay. Undefined when it is no URL.
 */
export function shownUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return undefined;
  }
}
