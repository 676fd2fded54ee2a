/**
 * What one signed service metadata answer costs a core, against the bare RSA signature inside it (the target: at most
 * 1.3 times), beside xml-crypto's signature of the same document, and what signing every answer ahead would cost at a
 * country's size:
 *   npx tsx bench/signing.ts [--signatures 3000] [--participants 2000000] [--against <another checkout>]
 * One process, one thread, no database: run it on an otherwise idle machine. `--against` signs as that checkout's
 * signing threads do too, in rounds taking turns with this one's, so that both see the same machine.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { signedServiceMetadata } from '../src/smp/signed-metadata.js';
import { signDocument } from '../src/smp/signing.js';
import { serviceMetadataXml, type PublishedProcess } from '../src/smp/xml.js';
import { benchSmpKey } from './smp.js';

const { values: args } = parseArgs({
  options: {
    signatures: { type: 'string', default: '3000' },
    participants: { type: 'string', default: '2000000' },
    against: { type: 'string' },
  },
});
const signatures = Number(args.signatures);
const participants = Number(args.participants);

const { key } = await benchSmpKey();
const certificate = key.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
const participant = { scheme: 'iso6523-actorid-upis', value: '0192:810000007' };
const documentType = {
  scheme: 'busdox-docid-qns',
  value:
    'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
};
const processes: PublishedProcess[] = [
  {
    process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
    endpoints: [
      {
        transportProfile: 'peppol-transport-as4-v2_0',
        url: 'https://ap.example.no/as4',
        certificate,
        serviceDescription: 'Access point',
        technicalContactUrl: 'https://ap.example.no/contact',
        requireBusinessLevelSignature: false,
        activationDate: null,
        expirationDate: null,
      },
    ],
  },
];

const ROUNDS = 10;

/**
 * Milliseconds of CPU per call of each of `works`, `signatures` calls each after a warm-up, in rounds taking turns so
 * that each sees the same machine. CPU time, not the clock's: on a shared machine the clock counts the time the
 * others' processes held the core too.
 */
function msPerTakingTurns<Works extends Array<() => unknown>>(...works: Works): { [K in keyof Works]: number } {
  for (const work of works) for (let i = 0; i < Math.min(200, signatures); i += 1) work();
  const perRound = Math.max(1, Math.round(signatures / ROUNDS));
  const rounds = Array.from({ length: ROUNDS }, () =>
    works.map((work) => {
      const started = process.cpuUsage();
      for (let i = 0; i < perRound; i += 1) work();
      const { user, system } = process.cpuUsage(started);
      return (user + system) / 1000 / perRound;
    }),
  );
  return works.map((_work, at) => rounds.reduce((sum, round) => sum + (round[at] ?? 0), 0) / ROUNDS) as {
    [K in keyof Works]: number;
  };
}

type Signer = () => string;
const signedHere: Signer = () => signedServiceMetadata(participant, documentType, processes, key);
const byXmlCrypto =
  (sign: typeof signDocument): Signer =>
  () =>
    sign(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem);

/** How `checkout`'s signing threads sign: from the template where it has one, else by xml-crypto. */
async function signerOf(checkout: string): Promise<Signer> {
  const template = join(resolve(checkout), 'src/smp/signed-metadata.ts');
  if (existsSync(template)) {
    const other = ((await import(template)) as { signedServiceMetadata: typeof signedServiceMetadata })
      .signedServiceMetadata;
    return () => other(participant, documentType, processes, key);
  }
  return byXmlCrypto(
    ((await import(join(resolve(checkout), 'src/smp/signing.ts'))) as { signDocument: typeof signDocument })
      .signDocument,
  );
}

const privateKey = createPrivateKey(key.privateKeyPem);
const answer = signedHere();
const [signed, rsa] = msPerTakingTurns(signedHere, () => sign('sha256', Buffer.from(answer), privateKey));
// Apart: the garbage xml-crypto leaves would be collected in the others' turns, and counted as theirs.
const [library] = msPerTakingTurns(byXmlCrypto(signDocument));
if (args.against) {
  const [here, there] = msPerTakingTurns(signedHere, await signerOf(args.against));
  console.log(
    `taking turns, ${ROUNDS} rounds: ${here.toFixed(3)} ms here, ${there.toFixed(3)} ms in ${args.against} ` +
      `(${Math.round(100 * (1 - here / there))} % less here)`,
  );
}
console.log(
  `one answer (${answer.length} bytes): ${signed.toFixed(3)} ms of a core, ${Math.round(1000 / signed)}/s; the RSA signature alone ` +
    `${rsa.toFixed(3)} ms: ${(signed / rsa).toFixed(2)} times the RSA signature (target: 1.3 at most); xml-crypto's signature of the same ` +
    `document ${library.toFixed(3)} ms (${(library / rsa).toFixed(2)} times)`,
);
for (const documentTypes of [4, 30]) {
  const answers = participants * documentTypes;
  console.log(
    `every answer of ${participants.toLocaleString('en')} participants with ${documentTypes} document types each: ` +
      `${((answers * answer.length) / 2 ** 30).toFixed(0)} GiB, ${((answers * signed) / 3_600_000).toFixed(1)} hours of a core to sign`,
  );
}
