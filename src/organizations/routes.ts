import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVERYONE } from '../http/auth.js';
import { sendJson } from '../http/held-json.js';
import { NotFoundError } from '../core/errors.js';
import { parseOrganization } from '../participants/identifiers.js';
import { organizationProcessesJson } from './json.js';
import { organizationProcesses, organizationSummary } from './repository.js';
import { OrganizationProcessList, OrganizationSummary } from './schemas.js';

/** Where the organizations' routes are (app.ts registers them there). */
export const ORGANIZATIONS_PREFIX = '/rest/api/organizations';
/** The route of organization processes, under the prefix. */
const ORGANIZATION_PROCESSES_PATH = '/:qualifiedIdentifier/processes';
/** The route of organization processes as Fastify has it, prefix included: its metrics and its early answer name it so. */
export const ORGANIZATION_PROCESSES_ROUTE = `${ORGANIZATIONS_PREFIX}${ORGANIZATION_PROCESSES_PATH}`;
// The machine-readable description says `organizations.processes`, the version table `organization.processes`.
export const ORGANIZATION_PROCESSES_MEDIA_TYPES = ['organizations.processes', 'organization.processes'];

const OrganizationParams = Type.Object({
  qualifiedIdentifier: Type.String({
    description: 'the organization: `iso6523-actorid-upis::<icd>:<organizationIdentifier>`',
  }),
});

/**
 * The public lookup is asked as often as the SMP (and answered before the framework as its lookups are,
 * organizations/early-answers.ts): no request lines below 500, as for them; the metrics count it.
 */
const quietLog = () => true;

const organizations: FastifyPluginAsyncTypebox = async (app) => {
  // An addition: the public lookup's heading (name and providers beside the identifier), one indexed read.
  app.get(
    '/:qualifiedIdentifier',
    {
      schema: { params: OrganizationParams, response: { 200: OrganizationSummary } },
      config: { access: EVERYONE, mediaTypes: ['organizations.get'], reads: 'standby', quietLog },
    },
    async (request) => {
      const { qualifiedIdentifier } = request.params;
      const organization = parseOrganization(qualifiedIdentifier);
      const summary = organization && (await organizationSummary(app.db, organization));
      if (!summary) throw NotFoundError.organization(qualifiedIdentifier);
      return summary;
    },
  );

  app.get(
    ORGANIZATION_PROCESSES_PATH,
    {
      schema: { params: OrganizationParams, response: { 200: OrganizationProcessList } },
      config: { access: EVERYONE, mediaTypes: ORGANIZATION_PROCESSES_MEDIA_TYPES, reads: 'standby', quietLog },
    },
    async (request, reply) => {
      const { qualifiedIdentifier } = request.params;
      const organization = parseOrganization(qualifiedIdentifier);
      const processes =
        organization && (await organizationProcesses(app.db, app.catalogue, app.heldParticipants, organization));
      if (!processes) throw NotFoundError.organization(qualifiedIdentifier);
      return sendJson(reply, organizationProcessesJson(processes));
    },
  );
};

export default organizations;
