import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SigningPool, type SigningKeyPems } from '../../src/smp/signing-pool.js';
import { testCertificate } from '../helpers/certificates.js';
import { expectValidSignedAnswer } from '../helpers/smp.js';

const participant = { scheme: 'iso6523-actorid-upis', value: '0192:123456785' };
const documentType = {
  scheme: 'busdox-docid-qns',
  value: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##x::2.1',
};
const processes = [
  {
    process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
    endpoints: [
      {
        transportProfile: 'peppol-transport-as4-v2_0',
        url: 'https://ap.example.org/as4',
        certificate: 'MIIB',
        serviceDescription: 'AP',
        technicalContactUrl: 'https://ap.example.org/contact',
        requireBusinessLevelSignature: false,
        activationDate: null,
        expirationDate: null,
      },
    ],
  },
];

// Long beside a timer's lateness when the other test files load the machine.
const IDLE_MS = 1000;
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('the signing threads', () => {
  let key: SigningKeyPems;
  let pool: SigningPool;
  beforeAll(async () => {
    const pems = await testCertificate('SMP signing pool test');
    key = { privateKeyPem: pems.key, certificatePem: pems.cert };
  });
  afterEach(() => pool.close());

  it('start with the first signature, not before, and one thread serves lookups that come one at a time', async () => {
    // Idle for longer than a thread takes to start, so that none ends during this test.
    pool = new SigningPool(2, 60_000);
    expect(pool.threadCount).toBe(0);
    for (let i = 0; i < 3; i += 1) {
      await expectValidSignedAnswer(await pool.sign(key, participant, documentType, processes), key.certificatePem);
    }
    expect(pool.threadCount).toBe(1);
    await Promise.all([1, 2, 3, 4].map(() => pool.sign(key, participant, documentType, processes)));
    expect(pool.threadCount).toBe(2);
  });

  it('end when they have had nothing to do for a while, and the next signature starts one again', async () => {
    pool = new SigningPool(2, IDLE_MS);
    await Promise.all([1, 2].map(() => pool.sign(key, participant, documentType, processes)));
    await until(() => pool.threadCount === 0);
    const signed = await pool.sign(key, participant, documentType, processes);
    // Counted at once: the independent verifier below can take longer than the idle time on a loaded machine.
    expect(pool.threadCount).toBe(1);
    await expectValidSignedAnswer(signed, key.certificatePem);
  });

  it('stay while signatures keep coming more often than the idle time, and sign every one', async () => {
    pool = new SigningPool(1, IDLE_MS);
    for (let i = 0; i < 5; i += 1) {
      await pool.sign(key, participant, documentType, processes);
      // Past the idle time of the signature before this one: its end must have been called off.
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 0.7));
      expect(pool.threadCount).toBe(1);
    }
  });
});
