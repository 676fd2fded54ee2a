import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { deliveryStatus } from '../network/delivery-status.js';
import type { DirectoryOptions } from '../network/directory-client.js';
import type { SmlOptions } from '../network/sml-client.js';
import { sharedRuns } from '../core/concurrency.js';
import { shownUrl } from '../core/urls.js';
import type { Database } from '../db/database.js';
import { migrationFiles } from '../db/migrate.js';
import { Role } from '../http/auth.js';
import { buildInfo } from './build-info.js';
import { certificateInfo, expiringWithin, watchedCertificates, type CertificateSources } from './certificates.js';
import { counts } from './counts.js';
import { flagCounts } from '../national-register/checks.js';
import { Status } from './schemas.js';

export interface StatusOptions {
  sources: CertificateSources;
  sml?: SmlOptions;
  directory?: DirectoryOptions;
  publicUrl?: string;
  /** CERTIFICATE_WARNING_DAYS. */
  warningDays: number;
  /** When this instance started (ms since the epoch). */
  startedAt: number;
  /** NATIONAL_REGISTER_URL; unset: no organization is checked. */
  nationalRegisterUrl?: string;
}

async function lastMigration(db: Database): Promise<string | null> {
  const [row] = await db.query<{ name: string }>('SELECT max(name) AS name FROM schema_migrations');
  return row?.name ?? null;
}

/** The status of this instance and of the registry it serves, read now. */
async function statusOf(db: Database, options: StatusOptions): Promise<Static<typeof Status>> {
  const now = Date.now();
  const certificates = await watchedCertificates(options.sources, now);
  const smp = certificates.find((certificate) => certificate.use === 'smp');
  const next = certificates.find((certificate) => certificate.use === 'smp_next');
  const { sml, directory } = options;
  return {
    ...buildInfo(),
    startedAt: new Date(options.startedAt).toISOString(),
    uptimeSeconds: Math.floor((now - options.startedAt) / 1000),
    database: {
      kind: db.kind,
      migration: await lastMigration(db),
      migrationOfThisVersion: (await migrationFiles()).at(-1) ?? '',
    },
    smp: {
      publicUrl: options.publicUrl ?? null,
      certificate: smp ? { ...smp, development: smp.development === true, issuedBy: smp.issuedBy ?? 'other_ca' } : null,
      next: next?.from ? { ...next, from: next.from } : null,
    },
    sml: sml ? { url: shownUrl(sml.url) ?? '(not a URL)', smpId: sml.smpId, caPinned: sml.caFile !== undefined } : null,
    directory: directory ? { url: shownUrl(directory.url) ?? '(not a URL)' } : null,
    nationalRegister:
      options.nationalRegisterUrl === undefined
        ? null
        : { url: shownUrl(options.nationalRegisterUrl) ?? '(not a URL)', flagged: await flagCounts(db) },
    clientCertificate: options.sources.clientCertificate
      ? certificateInfo(options.sources.clientCertificate, now)
      : null,
    deliveries: await deliveryStatus(db),
    counts: await counts(db, options.sources.catalogue, { sml: sml !== undefined, directory: directory !== undefined }),
    certificateWarningDays: options.warningDays,
    expiringCertificates: expiringWithin(certificates, options.warningDays),
  };
}

/** The authority's view of the registry: what runs, on what, with which certificates, what waits, and how much there is. */
const statusRoutes: FastifyPluginAsyncTypebox<StatusOptions> = async (app, options) => {
  // Reads asked while one runs share it: a console left open in many tabs costs one read.
  const shared = sharedRuns<Static<typeof Status>>();
  app.get(
    '/status',
    {
      schema: {
        summary:
          "The registry's status: version, database, SMP certificate and the next one, SML and Directory with their deliveries, " +
          'the national register with its flagged organizations, counts, and the certificates that expire soon',
        description:
          "Counts are exact up to 100,000 rows; beyond that `exact` is false and the count is PostgreSQL's estimate. No secret is shown: " +
          'URLs lose any password and query they carry; of a certificate, only what it publishes.',
        response: { 200: Status },
      },
      config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['status.get'] },
    },
    async () => shared('status', () => statusOf(app.db, options)),
  );
};

export default statusRoutes;
