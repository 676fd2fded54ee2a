import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalDirectory, type LocalDirectory } from '../../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import { loadSmpKeys, SmpKeyError, type SmpKeySettings } from '../../src/smp/keys.js';
import { buildApp } from '../../src/app.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testPki, testSelfSigned } from '../helpers/certificates.js';
import { migratedDataDirectory, testDatabaseKind } from '../helpers/database.js';
import { runCommandHere, runServerToEnd, startFailure } from '../helpers/entry-point.js';
import { addParticipant } from '../helpers/participants.js';
import { expectValidSignedAnswer, publishedParticipant, verifySignature } from '../helpers/smp.js';

const SMP_ID = 'rollover-smp';
const PUBLIC_URL = 'https://smp.example';
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const silent = { info: () => {}, warn: () => {} };

let dir: string;
let sml: LocalSml;
let directory: LocalDirectory;
const file = (name: string) => join(dir, name);
const pem = (name: string) => readFileSync(file(`${name}.pem`), 'utf8');
const fingerprint = (name: string) => new X509Certificate(pem(name)).fingerprint256;

/** The current pair, and `next` with its key from the instant `from`. */
const settings = (from: number, next = 'next', nextKey = next): SmpKeySettings & Record<string, string> => ({
  DATABASE_URL: 'postgres://unused',
  REGISTRY_DATA_DIR: dir,
  REGISTRY_SMP_KEY_FILE: file('current.key'),
  REGISTRY_SMP_CERTIFICATE_FILE: file('current.pem'),
  REGISTRY_SMP_NEXT_KEY_FILE: file(`${nextKey}.key`),
  REGISTRY_SMP_NEXT_CERTIFICATE_FILE: file(`${next}.pem`),
  REGISTRY_SMP_NEXT_CERTIFICATE_FROM: new Date(from).toISOString(),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smp-rollover-'));
  testPki(dir, []);
  // The SMP's current and next certificates are its SML client certificates too. Self-signed, each is its own trust
  // anchor: xmlsec1 trusting one must refuse a signature by the other.
  for (const name of ['current', 'next']) testSelfSigned(dir, name, `/CN=SMP ${name}`);
  const tls = { cert: pem('server'), key: readFileSync(file('server.key'), 'utf8'), ca: pem('current') + pem('next') };
  sml = await startLocalSml(0, tls);
  directory = await startLocalDirectory(0, tls);
});
afterAll(async () => {
  await sml?.close();
  await directory?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an SMP certificate rollover', () => {
  // An hour ahead by the clock the pair is read by: the test moves that clock across the instant, not the time.
  const from = Date.now() + HOUR;
  let offset = 0;
  const clock = () => Date.now() + offset;
  let t: TestApp;
  let baseUrl: string;
  let path: string;

  beforeAll(async () => {
    const keys = await loadSmpKeys(settings(from), silent, clock);
    t = await startTestApp({
      smp: { keys, publicUrl: PUBLIC_URL, cache: new SignedAnswerCache() },
      sml: { url: sml.url, smpId: SMP_ID, caFile: file('ca.pem'), timeoutMs: 5000 },
      directory: { url: directory.url, caFile: file('ca.pem'), timeoutMs: 5000 },
      delivery: { intervalMs: 50, retryMs: { first: 50, max: 200 }, leaseMs: 5000 },
    });
    // Over a socket: a kept answer is sent before the framework, by the server's early answer.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ({ path } = await publishedParticipant(t));
  }, 60_000);
  afterAll(async () => t?.close());

  const signedAnswer = async () => {
    const response = await fetch(`${baseUrl}${path}`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };
  /** Signed by the key of `expected` and by no other: the other certificate does not verify it. */
  const expectSignedBy = async (xml: Buffer, expected: string, other: string) => {
    await expectValidSignedAnswer(xml, pem(expected));
    expect((await verifySignature(xml, pem(other))).ok).toBe(false);
  };
  /** Registers a new participant and waits until the SML and the Directory hold it: the certificates they saw then. */
  const registeredWith = async () => {
    const [smlCalls, directoryCalls] = [sml.clientCertificates.length, directory.clientCertificates.length];
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    await vi.waitFor(
      () => {
        expect(sml.registrations.get(SMP_ID)?.has(participant.qualifiedIdentifier)).toBe(true);
        expect(directory.indexed.has(participant.qualifiedIdentifier)).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    return {
      sml: new Set(sml.clientCertificates.slice(smlCalls)),
      directory: new Set(directory.clientCertificates.slice(directoryCalls)),
    };
  };

  it('before the instant: the current key signs (the answer is kept), and the SML and the Directory see the current certificate', async () => {
    await expectSignedBy(await signedAnswer(), 'current', 'next');
    // The kept answer, sent before the framework.
    await expectSignedBy(await signedAnswer(), 'current', 'next');
    const current = new Set([fingerprint('current')]);
    expect(await registeredWith()).toEqual({ sml: current, directory: current });
  });

  it('at the instant: the kept answer is dropped, the next key signs, and the SML and the Directory see the next certificate', async () => {
    offset = from - Date.now();
    await expectSignedBy(await signedAnswer(), 'next', 'current');
    const next = new Set([fingerprint('next')]);
    expect(await registeredWith()).toEqual({ sml: next, directory: next });
  });

  it('after the instant: an instance started then signs with the next key', async () => {
    const keys = await loadSmpKeys(settings(from), silent, () => from + HOUR);
    // On the same database (the embedded one belongs to one process).
    const later = await buildApp({ db: t.db, smp: { keys, publicUrl: PUBLIC_URL, cache: new SignedAnswerCache() } });
    try {
      const response = await later.inject(path);
      expect(response.statusCode, response.body).toBe(200);
      await expectSignedBy(response.rawPayload, 'next', 'current');
    } finally {
      await later.close();
    }
  });
});

describe('a next pair the start refuses', () => {
  it('a next key that does not belong to the next certificate', async () => {
    await expect(loadSmpKeys(settings(Date.now() + HOUR, 'next', 'current'), silent)).rejects.toThrow(
      /^next SMP key: does not belong/,
    );
  });

  it("an instant past the next certificate's expiry", async () => {
    await expect(loadSmpKeys(settings(Date.now() + 2 * DAY), silent)).rejects.toThrow(
      /^next SMP certificate: not valid at REGISTRY_SMP_NEXT_CERTIFICATE_FROM/,
    );
  });

  it('a next pair without a configured current pair, and no development key is made for it', async () => {
    const { DATABASE_URL: _, REGISTRY_SMP_KEY_FILE: __, ...embedded } = settings(Date.now() + HOUR);
    await expect(loadSmpKeys({ ...embedded, REGISTRY_DATA_DIR: file('no-key') }, silent)).rejects.toThrow(
      /replaces a configured one/,
    );
    expect(existsSync(file('no-key'))).toBe(false);
  });

  it('a next pair beside a fixed SML client certificate, which would not roll over', async () => {
    await expect(
      loadSmpKeys({ ...settings(Date.now() + HOUR), SML_CLIENT_CERT_FILE: file('current.pem') }, silent),
    ).rejects.toThrow(SmpKeyError);
  });
});

// The entry points read no database for these: once, on the embedded database.
describe.runIf(testDatabaseKind === 'embedded')("the operator's commands", () => {
  // sml-reconcile opens the database: the migrated one, not made by its first run.
  beforeAll(() => migratedDataDirectory(file('data')));
  const environment = (from: number, next = 'next', nextKey = next) => {
    const { DATABASE_URL: _, ...rest } = settings(from, next, nextKey);
    return {
      ...rest,
      REGISTRY_DATA_DIR: file('data'),
      SML_URL: sml.url,
      SML_SMP_ID: SMP_ID,
      SML_CA_FILE: file('ca.pem'),
    };
  };

  it('sml-prepare-certificate announces the next certificate with the current one; run again, the same announcement', async () => {
    const from = Date.now() + 2 * HOUR;
    for (let run = 0; run < 2; run += 1) {
      const calls = sml.clientCertificates.length;
      const finished = await runCommandHere(['sml-prepare-certificate'], environment(from));
      expect(finished.code, finished.stderr).toBe(0);
      expect(finished.stdout).toMatch(/announced the certificate .*CN=SMP next/);
      expect(sml.clientCertificates.slice(calls)).toEqual([fingerprint('current')]);
    }
    expect([...sml.certificateChanges]).toEqual([
      [
        fingerprint('current'),
        { certificate: fingerprint('next'), migrationDate: new Date(from).toISOString().slice(0, 10) },
      ],
    ]);
  }, 60_000);

  it('sml-reconcile calls the SML as the server does (the SMP pair as client certificate, mutual TLS) and says what it did', async () => {
    const stranger = 'iso6523-actorid-upis::0192:300000002';
    sml.registrations.set(SMP_ID, new Set([...(sml.registrations.get(SMP_ID) ?? []), stranger]));
    const calls = sml.clientCertificates.length;
    const finished = await runCommandHere(['sml-reconcile'], environment(Date.now() + HOUR));
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain(`extra:   ${stranger} (deleted)`);
    expect(new Set(sml.clientCertificates.slice(calls))).toEqual(new Set([fingerprint('current')]));
    expect(sml.registrations.get(SMP_ID)?.has(stranger)).toBe(false);
  }, 60_000);

  it("the server refuses to start with a next key that does not match, or an instant past the next certificate's expiry", async () => {
    const mismatched = await runServerToEnd(environment(Date.now() + HOUR, 'next', 'current'));
    expect(startFailure(mismatched).msg).toBe('next SMP key: does not belong to the SMP certificate');
    const expired = await runServerToEnd(environment(Date.now() + 2 * DAY));
    expect(startFailure(expired).msg).toMatch(
      /^next SMP certificate: not valid at REGISTRY_SMP_NEXT_CERTIFICATE_FROM \S+ \(valid from .* to .*\)$/,
    );
  }, 60_000);
});
