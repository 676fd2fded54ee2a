import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { smlClient, SmlError } from '../../src/network/sml-client.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { testPki } from '../helpers/certificates.js';
import { addParticipant } from '../helpers/participants.js';

const SMP_ID = 'tls-smp';
let dir: string;
let t: TestApp;
let sml: LocalSml;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sml-tls-'));
  testPki(dir, ['client']);
  const ca = readFileSync(file('ca.pem'), 'utf8');
  sml = await startLocalSml(0, {
    cert: readFileSync(file('server.pem'), 'utf8'),
    key: readFileSync(file('server.key'), 'utf8'),
    ca,
  });
  // The client trusts the test CA as it trusts a public one for the real SML (the default agent's options apply to every request).
  https.globalAgent.options.ca = ca;
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
  await sml?.close();
  rmSync(dir, { recursive: true, force: true });
});

const held = () => sml.registrations.get(SMP_ID) ?? new Set<string>();
const smlStatus = async (): Promise<{ pending: number; attempts: number; lastError: string | null }> =>
  (
    expectStatus(
      await t.app.inject({
        method: 'GET',
        url: '/rest/api/deliveries',
        headers: { authorization: t.users.authority.authorization },
      }),
      200,
    ) as Array<{ target: string; pending: number; attempts: number; lastError: string | null }>
  ).find((entry) => entry.target === 'sml') ?? { pending: -1, attempts: 0, lastError: null };

async function appWith(certificate: boolean): Promise<App> {
  const app = await buildApp({
    db: t.db,
    sml: {
      url: sml.url,
      smpId: SMP_ID,
      timeoutMs: 2000,
      ...(certificate ? { clientCertificateFile: file('client.pem'), clientKeyFile: file('client.key') } : {}),
    },
    delivery: { intervalMs: 50, retryMs: { first: 50, max: 200 }, leaseMs: 5000 },
  });
  await app.ready();
  return app;
}

describe('mutual TLS with the SML', () => {
  it("refuses a call without the SMP's client certificate, and takes one with it", async () => {
    const participant = 'iso6523-actorid-upis::0192:500000007';
    await expect(smlClient({ url: sml.url, smpId: SMP_ID }).create(participant)).rejects.toBeInstanceOf(SmlError);
    expect(held().has(participant)).toBe(false);
    await smlClient({
      url: sml.url,
      smpId: SMP_ID,
      clientCertificateFile: file('client.pem'),
      clientKeyFile: file('client.key'),
    }).create(participant);
    expect(held().has(participant)).toBe(true);
  });

  it('retries a delivery refused for want of the certificate, and delivers it once the certificate is configured', async () => {
    const without = await appWith(false);
    const participant = await addParticipant(without, t.users.serviceProvider);
    await vi.waitFor(async () => expect((await smlStatus()).attempts).toBeGreaterThan(1), { timeout: 10_000 });
    const failing = await smlStatus();
    expect(failing.pending).toBeGreaterThan(0);
    expect(failing.lastError).toMatch(/^SML/);
    expect(failing.lastError).not.toMatch(/PRIVATE KEY/);
    expect(held().has(participant.qualifiedIdentifier)).toBe(false);
    await without.close();

    const withCertificate = await appWith(true);
    try {
      await vi.waitFor(async () => expect(await smlStatus()).toMatchObject({ pending: 0, attempts: 0 }), {
        timeout: 10_000,
        interval: 50,
      });
      expect(held().has(participant.qualifiedIdentifier)).toBe(true);
    } finally {
      await withCertificate.close();
    }
  });
});
