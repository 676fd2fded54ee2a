/**
 * The expiry (notAfter) of an X.509 certificate the API serves as base64 DER: read with a small DER walk, since
 * the browser has no certificate parser and the expiry is the only field the console shows. Undefined for
 * anything that is not a certificate.
 */
export function certificateExpiry(base64Der: string | undefined): string | undefined {
  if (!base64Der) return undefined;
  try {
    const der = Uint8Array.from(atob(base64Der), (character) => character.charCodeAt(0));
    const tbs = children(der, element(der, 0))[0];
    if (!tbs) return undefined;
    const fields = children(der, tbs);
    // tbsCertificate: [0] version (optional), serialNumber, signature, issuer, validity, ...
    const validity = fields[fields[0]?.tag === 0xa0 ? 4 : 3];
    const notAfter = validity ? children(der, validity)[1] : undefined;
    return notAfter ? timeOf(der, notAfter) : undefined;
  } catch {
    return undefined;
  }
}

interface Element {
  tag: number;
  start: number;
  end: number;
}

function element(der: Uint8Array, offset: number): Element {
  const tag = der[offset] ?? 0;
  let length = der[offset + 1] ?? 0;
  let start = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    length = 0;
    for (let index = 0; index < octets; index += 1) length = length * 256 + (der[start + index] ?? 0);
    start += octets;
  }
  if (start + length > der.length) throw new RangeError('truncated DER');
  return { tag, start, end: start + length };
}

function children(der: Uint8Array, parent: Element): Element[] {
  const found: Element[] = [];
  for (let offset = parent.start; offset < parent.end; offset = found[found.length - 1]!.end)
    found.push(element(der, offset));
  return found;
}

/** UTCTime (YYMMDDHHMMSSZ, 1950–2049) or GeneralizedTime (YYYYMMDDHHMMSSZ) as an ISO date-time. */
function timeOf(der: Uint8Array, time: Element): string | undefined {
  const text = String.fromCharCode(...der.subarray(time.start, time.end));
  const match = /^(\d{2}|\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(
    time.tag === 0x17 || time.tag === 0x18 ? text : '',
  );
  if (!match) return undefined;
  const [, year = '', month, day, hour, minute, second] = match;
  const fullYear = year.length === 4 ? year : `${Number(year) >= 50 ? 19 : 20}${year}`;
  return `${fullYear}-${month}-${day}T${hour}:${minute}:${second}Z`;
}

/** A certificate expiring within this many days is marked, as the registry's log and status warn of it (CERTIFICATE_WARNING_DAYS' default). */
export const EXPIRY_WARNING_DAYS = 30;

const DAY_MS = 24 * 3600 * 1000;

/** Whether a certificate has expired, expires within `warningDays`, or neither; with its whole days left. */
export function expiryOf(
  expiry: string,
  now = new Date(),
  warningDays = EXPIRY_WARNING_DAYS,
): { state: 'expired' | 'expiring' | 'valid'; daysLeft: number } {
  const left = Date.parse(expiry) - now.getTime();
  const daysLeft = Math.floor(left / DAY_MS);
  return { state: left < 0 ? 'expired' : left <= warningDays * DAY_MS ? 'expiring' : 'valid', daysLeft };
}
