/** Where an endpoint's certificate may say when it expires (the certificate fields come with the SMP work). */
const EXPIRY_KEYS = ['notAfter', 'validTo', 'expiresAt', 'expiry', 'certificateExpiry'];

/** The expiry of an endpoint's certificate, when the API gives one (on the endpoint or its `certificate`). */
export function certificateExpiry(endpoint: unknown): string | undefined {
  const record = (typeof endpoint === 'object' && endpoint !== null ? endpoint : {}) as Record<string, unknown>;
  for (const holder of [record, record.certificate]) {
    if (typeof holder !== 'object' || holder === null) continue;
    for (const key of EXPIRY_KEYS) {
      const value = (holder as Record<string, unknown>)[key];
      if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
    }
  }
  return undefined;
}

export function isExpired(expiry: string, now = new Date()): boolean {
  return Date.parse(expiry) < now.getTime();
}
