import { Type } from 'typebox';
import { SML_STATES } from '../network/network.js';
import { DeliveryStatusList } from '../network/schemas.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { EXACT_COUNT_LIMIT } from './counts.js';
import { FLAG_STATES } from '../national-register/checks.js';

const Instant = (description: string) => Type.String({ format: 'date-time', description });

const CERTIFICATE = {
  subject: Type.String(),
  issuer: Type.String(),
  serialNumber: Type.String({ description: 'hexadecimal' }),
  notBefore: Instant('valid from'),
  notAfter: Instant('valid until'),
  daysLeft: Type.Integer({ description: 'whole days until notAfter: 0 on its last day, negative once expired' }),
};

const SmpCertificate = Type.Object(
  {
    ...CERTIFICATE,
    development: Type.Boolean({
      description: 'true: the development key made on the embedded database, not a Peppol SMP certificate',
    }),
    issuedBy: Type.Enum(['development', 'self_signed', 'other_ca', 'peppol_smp_ca'], {
      description:
        "who issued it: development (the development key), self_signed, other_ca (not OpenPEPPOL's SMP CA), peppol_smp_ca " +
        '(its issuer is named `CN=PEPPOL SERVICE METADATA PUBLISHER [TEST ]CA[ - Gn]`, `O=OpenPEPPOL[ AISBL]`; by name only, the chain is ' +
        "the SML's and the clients' to verify). Anything but peppol_smp_ca: no network client trusts the SMP's signatures",
    }),
  },
  { title: 'SmpCertificateInfo' },
);

const NextSmpCertificate = Type.Object(
  {
    ...CERTIFICATE,
    from: Instant('the instant it replaces the certificate in use (REGISTRY_SMP_NEXT_CERTIFICATE_FROM)'),
  },
  { title: 'NextSmpCertificateInfo' },
);

const ExpiringCertificate = Type.Object(
  {
    use: Type.Enum(['smp', 'smp_next', 'client', 'access_point'], {
      description:
        'smp: signs the SMP answers (and is the SML and Directory client certificate unless `client`); smp_next: the next SMP ' +
        'certificate announced; client: the fixed SML and Directory client certificate; access_point: published for an access point endpoint',
    }),
    ...CERTIFICATE,
    accessPoint: Type.Optional(
      Type.Object({ identifier: Uuid(), title: Type.String() }, { title: 'AccessPointReference' }),
    ),
    endpoint: Type.Optional(Type.String({ description: "access_point: the endpoint's URL" })),
  },
  { title: 'ExpiringCertificate' },
);

const Count = Type.Object(
  {
    count: Type.Integer({ minimum: 0 }),
    exact: Type.Boolean({
      description: `false: more than ${EXACT_COUNT_LIMIT} rows, and \`count\` is PostgreSQL's estimate of them`,
    }),
  },
  { title: 'Count' },
);

export const Status = Type.Object(
  {
    version: Type.String({ description: "the registry's version (package.json)" }),
    commit: Nullable(
      Type.String({ description: 'the git commit the running code was built from; null outside a git checkout' }),
    ),
    builtAt: Nullable(Instant('when the running build was made; null when the service runs from its sources')),
    startedAt: Instant('when this instance started'),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
    database: Type.Object(
      {
        kind: Type.Enum(['postgres', 'embedded']),
        migration: Nullable(Type.String({ description: 'the last migration the database has applied' })),
        migrationOfThisVersion: Type.String({
          description:
            'the last migration this version ships: another while instances of two versions share the database',
        }),
      },
      { title: 'DatabaseStatus' },
    ),
    smp: Type.Object(
      {
        publicUrl: Nullable(
          Type.String({ description: 'REGISTRY_PUBLIC_URL; null: each answer names the host it was asked at' }),
        ),
        certificate: Nullable(SmpCertificate),
        next: Nullable(NextSmpCertificate),
      },
      {
        title: 'SmpStatus',
        description:
          'the SMP certificate in use (null: no signing key, the SMP answers 503) and the next one, before its instant',
      },
    ),
    sml: Nullable(
      Type.Object(
        {
          url: Type.String(),
          smpId: Type.String(),
          caPinned: Type.Boolean({
            description: "true: the SML's server certificate must chain to SML_CA_FILE; false: to Node's public roots",
          }),
        },
        { title: 'SmlConfiguration' },
      ),
    ),
    directory: Nullable(Type.Object({ url: Type.String() }, { title: 'DirectoryConfiguration' })),
    nationalRegister: Nullable(
      Type.Object(
        {
          url: Type.String({ description: 'NATIONAL_REGISTER_URL' }),
          flagged: Type.Object(Object.fromEntries(FLAG_STATES.map((state) => [state, Type.Integer({ minimum: 0 })])), {
            title: 'RegisterFlagCounts',
            description:
              'Norwegian organizations of live participants by flag: deleted by Enhetsregisteret, unknown to it, or unconfirmed ' +
              '(registered while it did not answer); listed at /rest/api/national-register/flags',
          }),
        },
        {
          title: 'NationalRegisterStatus',
          description: 'Enhetsregisteret; null: NATIONAL_REGISTER_URL is unset and no organization is checked',
        },
      ),
    ),
    clientCertificate: Nullable(
      Type.Object(CERTIFICATE, {
        title: 'ClientCertificateInfo',
        description:
          'the fixed SML and Directory client certificate (SML_CLIENT_CERT_FILE); null: the SMP certificate in use is the client certificate',
      }),
    ),
    deliveries: DeliveryStatusList,
    counts: Type.Object(
      {
        serviceProviders: Type.Integer({ minimum: 0 }),
        accessPointProviders: Type.Integer({ minimum: 0 }),
        accessPoints: Type.Integer({ minimum: 0 }),
        participants: Count,
        identifierFaults: Type.Object(Count.properties, {
          title: 'IdentifierFaultCount',
          description:
            "live participants whose organization identifier breaks its scheme's rule (registered before the rules, or with " +
            'IDENTIFIER_VALUE_CHECKS=false); listed by GET /rest/api/identifier-faults',
        }),
        sml: Nullable(
          Type.Object(Object.fromEntries(SML_STATES.map((state) => [state, Count])), {
            title: 'SmlStateCounts',
            description:
              'organizations by the state the SML delivery recorded; those waiting for it are in `deliveries`',
          }),
        ),
        directory: Nullable(Type.Object({ pushed: Count }, { title: 'DirectoryCounts' })),
      },
      { title: 'RegistryCounts' },
    ),
    certificateWarningDays: Type.Integer({
      description:
        'CERTIFICATE_WARNING_DAYS: a certificate that expires within as many days is listed below and logged daily',
    }),
    expiringCertificates: Type.Array(ExpiringCertificate, {
      description:
        'the certificates the registry publishes or presents that expire within certificateWarningDays or have expired, soonest first',
    }),
  },
  { title: 'Status' },
);
