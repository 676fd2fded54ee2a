import { ParticipantSearchIndex } from '../src/participants/search-index.js';
const FIRST = [
  'Nord',
  'Fjord',
  'Vest',
  'Øst',
  'Sør',
  'Berg',
  'Lia',
  'Dal',
  'Skog',
  'Sjø',
  'Havn',
  'Bakke',
  'Elve',
  'Fjell',
  'Stein',
  'Granli',
  'Solberg',
  'Lunde',
  'Haug',
  'Moen',
  'Nygård',
  'Strand',
  'Holm',
  'Vik',
  'Aas',
  'Bø',
  'Kirke',
  'Tinde',
  'Brekke',
  'Lyng',
  'Furu',
  'Bjørke',
  'Eik',
  'Ask',
  'Lind',
  'Hegg',
  'Rogn',
  'Selje',
  'Vidde',
  'Myr',
  'Tangen',
  'Odden',
  'Nesset',
  'Øya',
  'Sundet',
  'Våg',
  'Bukta',
  'Kleiva',
  'Ura',
  'Li',
];
const TRADES = [
  'Bygg',
  'Elektro',
  'Rør',
  'Transport',
  'Regnskap',
  'Consulting',
  'Eiendom',
  'Maskin',
  'Handel',
  'Data',
  'Tre',
  'Betong',
  'Maling',
  'Auto',
  'Frisør',
  'Bakeri',
  'Fisk',
  'Landbruk',
  'Entreprenør',
  'Arkitekter',
  'Advokatfirma',
  'Tannlege',
  'Legesenter',
  'Renhold',
  'Sikkerhet',
  'Media',
  'Design',
  'Invest',
  'Holding',
  'Shipping',
  'Energi',
  'Solutions',
  'Teknikk',
  'Service',
  'Drift',
  'Montasje',
  'Snekkeri',
  'Blikk',
  'Glass',
  'Kjøkken',
  'Møbler',
  'Sport',
  'Reise',
  'Helse',
  'Omsorg',
  'Barnehage',
  'Skole',
  'Kultur',
  'Hotell',
  'Kafé',
];
const FORMS = [
  'AS',
  'AS',
  'AS',
  'AS',
  'ASA',
  'ANS',
  'DA',
  'SA',
  'ENK',
  'Kommune',
  'Stiftelse',
  'BA',
  'AS',
  'AS',
  'NUF',
];
const n = Number(process.argv[2] ?? 2_000_000);
const index = new ParticipantSearchIndex();
const hex = (v: number) => v.toString(16).padStart(8, '0');
let t = performance.now();
for (let i = 0; i < n; i += 1) {
  const h = Math.imul(i, 2654435761) >>> 0;
  const name =
    `${FIRST[(h >>> 4) % 50]}${TRADES[(h >>> 12) % 50]!.toLowerCase()} ${FORMS[(h >>> 20) % 15]}`.toLowerCase();
  index.load({
    id: `${hex(h)}-0000-4000-8000-${hex(i)}0000`,
    icd: '0192',
    organizationIdentifier: String(900000000 + i),
    nameLower: name,
    serviceProviderId: `00000000-0000-4000-8000-0000000000${String(i % 20).padStart(2, '0')}`,
    lastModificationDay: 20000 - (i % 1800),
    deleteDay: null,
    processes: [[`00000000-0000-4000-8000-00000000010${i % 4}`, 20000 - (i % 1800)]],
  });
}
index.finishLoad();
console.log(
  `insert ${n}: ${((performance.now() - t) / 1000).toFixed(1)} s; heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB; rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB; external ${(process.memoryUsage().arrayBuffers / 2 ** 20).toFixed(0)} MiB`,
);
for (const text of ['bygg', 'fjordbygg', 'as', 'nord', '9000001', 'elektro as']) {
  if (!ParticipantSearchIndex.answers(text)) continue;
  t = performance.now();
  let r;
  for (let k = 0; k < Number(process.env.REPEAT ?? 20); k += 1)
    r = index.search({ text, providerId: null, today: 20001, offset: 0, size: 30 });
  console.log(
    `${text}: ${r!.total} hits, ${((performance.now() - t) / Number(process.env.REPEAT ?? 20)).toFixed(2)} ms/search`,
  );
}
t = performance.now();
global.gc?.();
console.log(`full gc ${(performance.now() - t).toFixed(0)} ms`);
