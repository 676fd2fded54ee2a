import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVERYONE } from '../http/auth.js';
import { NotFoundError } from '../core/errors.js';
import { parseOrganization } from '../participants/identifiers.js';
import { organizationProcesses } from './repository.js';
import { OrganizationProcessList } from './schemas.js';

const OrganizationParams = Type.Object({
  qualifiedIdentifier: Type.String({ description: 'the organization: `iso6523-actorid-upis::<icd>:<organizationIdentifier>`' }),
});

const organizations: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:qualifiedIdentifier/processes', {
    schema: { params: OrganizationParams, response: { 200: OrganizationProcessList } },
    // The machine-readable description says `organizations.processes`, the version table `organization.processes`.
    config: { access: EVERYONE, mediaTypes: ['organizations.processes', 'organization.processes'], reads: 'standby' },
  }, async (request) => {
    const { qualifiedIdentifier } = request.params;
    const organization = parseOrganization(qualifiedIdentifier);
    const processes = organization && (await organizationProcesses(app.db, app.catalogue, organization));
    if (!processes) throw NotFoundError.organization(qualifiedIdentifier);
    return processes;
  });
};

export default organizations;
