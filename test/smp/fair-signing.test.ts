import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmpKeys } from '../../src/smp/keys.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { median } from '../helpers/assertions.js';
import { testCertificate } from '../helpers/certificates.js';
import { publishedParticipant } from '../helpers/smp.js';

// Without the answers' cache every lookup signs: each is a cold one.
let t: TestApp;
let path: string;
beforeAll(async () => {
  const pems = await testCertificate('fair signing');
  t = await startTestApp({
    smp: { keys: new SmpKeys({ privateKeyPem: pems.key, certificatePem: pems.cert, development: false }) },
  });
  ({ path } = await publishedParticipant(t));
});
afterAll(() => t.close());

/** A signed service metadata lookup from `from`, and how long it took. */
async function lookUp(from: string): Promise<number> {
  const started = performance.now();
  const answer = await t.app.inject({ url: path, remoteAddress: from });
  expect(answer.statusCode, answer.body).toBe(200);
  return performance.now() - started;
}

describe('cold signed answers', () => {
  it("for an address asking many at once wait for one another; another address's lookup is signed between them", async () => {
    const flooded: number[] = [];
    let flooding = true;
    const flood = async () => {
      while (flooding) flooded.push(await lookUp('203.0.113.9'));
    };
    // 60 at once: within MAX_REQUESTS_PER_ADDRESS, some thirty signatures for each signing thread.
    const floods = Array.from({ length: 60 }, flood);
    try {
      await expect.poll(() => flooded.length, { timeout: 60_000 }).toBeGreaterThanOrEqual(60);
      flooded.length = 0;
      const others: number[] = [];
      for (const from of ['198.51.100.9', '198.51.100.10', '198.51.100.11', '198.51.100.9', '198.51.100.10'])
        others.push(await lookUp(from));
      await expect.poll(() => flooded.length, { timeout: 60_000 }).toBeGreaterThanOrEqual(9);
      const floodsLookup = median(flooded);
      console.log(
        `cold lookups: ${others.map((ms) => ms.toFixed(0)).join(', ')} ms from other addresses, during a flood whose lookups took ${floodsLookup.toFixed(0)} ms (median of ${flooded.length})`,
      );
      // In turn among the flood's, they would wait as long as its lookups; ahead of them, for the signatures under way.
      expect(median(others)).toBeLessThan(floodsLookup / 3);
    } finally {
      flooding = false;
      await Promise.all(floods);
    }
  }, 120_000);
});
