import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The floors of src/ (README, "Code layout"): a folder imports only the folders of the floors below it and the
 * sideways imports listed here, so a back-up import fails the lint.
 */
const RESOURCES = [
  'access-point-providers',
  'access-points',
  'capabilities',
  'catalogue-cache',
  'code-lists',
  'document-types',
  'identifier-schemes',
  'national-register',
  'organizations',
  'participants',
  'processes',
  'service-providers',
  'sessions',
  'sign-in-locks',
  'transport-profiles',
  'users',
];
const BUILT_ON_RESOURCES = ['smp', 'changes', 'network', 'web', 'operations', 'setup', 'openapi', 'status'];

/**
 * Sideways imports between resources: each is a real dependency, and together they form no circle (keep it so: a
 * resource that needs another's vocabulary both ways moves that vocabulary down to db or core).
 */
const RESOURCE_NEEDS = {
  // An access point names its provider and its transport profile.
  'access-points': ['access-point-providers', 'transport-profiles'],
  // The catalogue cache holds the rows of the seven kinds it names; none of them imports the cache (their
  // CatalogueTable and the cached reads are in db/catalogue-table.ts and http/catalogue-reads.ts).
  'catalogue-cache': [
    'access-point-providers',
    'access-points',
    'capabilities',
    'document-types',
    'identifier-schemes',
    'processes',
    'service-providers',
    'transport-profiles',
  ],
  // The code lists load the identifier schemes; their removal dates are listed, and announced, with the live participants
  // that lose what they remove (a process, or a document type of one).
  'code-lists': ['identifier-schemes', 'participants', 'processes'],
  // A document type names its processes.
  'document-types': ['processes'],
  // The national register checks participants' organizations (the check participants/organization-check.ts asks for).
  'national-register': ['participants'],
  // An organization is read from its participants and their processes.
  organizations: ['participants', 'processes'],
  // A participant registers for processes, with an ICD the identifier schemes accept; a service provider's own
  // identifier (0242) follows its access point's certificates.
  participants: ['processes', 'identifier-schemes', 'access-points'],
  // A process may require ICDs the identifier schemes know.
  processes: ['identifier-schemes'],
  // A service provider names its access points; ending one expires its participants.
  'service-providers': ['access-points', 'participants'],
  // A user acts for a service provider or an access point provider; its credential check takes the sign-in throttle,
  // the sign-in locks and the turns, and a new password or its deletion ends its sessions. Neither imports users: the
  // username fold the locks key by is core/username.ts, the role a session answers with is http/auth.ts's.
  users: ['access-point-providers', 'service-providers', 'sessions', 'sign-in-locks'],
};

/** Sideways imports between the parts built on resources: none forms a circle. */
const PART_NEEDS = {
  // The status reads the SMP's certificates and the deliveries' state.
  status: ['smp', 'network'],
};

const FLOORS = {
  core: [],
  db: ['core'],
  http: ['core', 'db'],
  ...Object.fromEntries(
    RESOURCES.map((resource) => [resource, ['core', 'db', 'http', ...(RESOURCE_NEEDS[resource] ?? [])]]),
  ),
  ...Object.fromEntries(
    BUILT_ON_RESOURCES.map((part) => [part, ['core', 'db', 'http', ...RESOURCES, ...(PART_NEEDS[part] ?? [])]]),
  ),
};

/**
 * dev/ (the local SML and Directory that tests and development run) may import src/, never the other way: it is not
 * built. Leaving a folder of src/ for dev/ already fails that folder's floor; this holds the files at src/'s top.
 */
const NOT_DEV = { regex: '^(\\.\\./)+dev/', message: 'src/ never imports dev/: the local stand-ins are not shipped.' };

/**
 * The rules for one folder: any import that leaves it must land in a folder it may import. A file at its top leaves it
 * with `../`; a file in a folder of its own (http/early-answers/) with `../../`, its `../` staying on the floor.
 */
const floor = ([folder, allowed]) => {
  const lookahead = allowed.length === 0 ? '' : `(?!(?:${allowed.join('|')})/)`;
  const leaving = (files, up) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^${up}${lookahead}`,
              message: `src/${folder}/ may import only ${allowed.length === 0 ? 'itself' : allowed.join(', ')} (the floors: README, "Code layout").`,
            },
          ],
        },
      ],
    },
  });
  return [leaving([`src/${folder}/*.ts`], '\\.\\./'), leaving([`src/${folder}/*/**/*.ts`], '\\.\\./\\.\\./')];
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'web/', 'data/', 'bench/results/', 'coverage/', 'test-output/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...Object.entries(FLOORS).flatMap(floor),
  { files: ['src/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [NOT_DEV] }] } },
  {
    // The wiring imports every floor, but not the entry points that start it.
    files: ['src/app.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./(server|cli|config)\\.js$',
              message: 'app.ts is wired by server.ts and cli.ts, never the other way round.',
            },
            NOT_DEV,
          ],
        },
      ],
    },
  },
);
