import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVERYONE } from '../http/auth.js';
import { jsonArray, jsonObject, jsonOf, sendJson } from '../http/held-json.js';
import { processJson } from '../processes/json.js';
import { NotFoundError } from '../core/errors.js';
import { parseOrganization } from '../participants/identifiers.js';
import { organizationProcesses, organizationSummary } from './repository.js';
import { OrganizationProcessList, OrganizationSummary, ProcessReceivableSince } from './schemas.js';

const OrganizationParams = Type.Object({
  qualifiedIdentifier: Type.String({ description: 'the organization: `iso6523-actorid-upis::<icd>:<organizationIdentifier>`' }),
});

const organizations: FastifyPluginAsyncTypebox = async (app) => {
  // An addition: the public lookup's heading (name and providers beside the identifier), one indexed read.
  app.get('/:qualifiedIdentifier', {
    schema: { params: OrganizationParams, response: { 200: OrganizationSummary } },
    config: { access: EVERYONE, mediaTypes: ['organizations.get'] },
  }, async (request) => {
    const { qualifiedIdentifier } = request.params;
    const organization = parseOrganization(qualifiedIdentifier);
    const summary = organization && (await organizationSummary(app.db, organization));
    if (!summary) throw NotFoundError.organization(qualifiedIdentifier);
    return summary;
  });

  app.get('/:qualifiedIdentifier/processes', {
    schema: { params: OrganizationParams, response: { 200: OrganizationProcessList } },
    // The machine-readable description says `organizations.processes`, the version table `organization.processes`.
    config: { access: EVERYONE, mediaTypes: ['organizations.processes', 'organization.processes'], reads: 'standby' },
  }, async (request, reply) => {
    const { qualifiedIdentifier } = request.params;
    const organization = parseOrganization(qualifiedIdentifier);
    const processes = organization && (await organizationProcesses(app.db, app.catalogue, app.participantSearch, organization));
    if (!processes) throw NotFoundError.organization(qualifiedIdentifier);
    return sendJson(reply, jsonArray(processes.map(({ process, receivableSince }) =>
      jsonObject([processJson(reply, process), jsonOf(reply, ProcessReceivableSince, { receivableSince })]))));
  });
};

export default organizations;
