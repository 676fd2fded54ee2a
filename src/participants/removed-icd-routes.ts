import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationError } from '../core/errors.js';
import { pageOf, pageRequest } from '../core/paging.js';
import { actorOf } from '../http/actor.js';
import { Role, type Access } from '../http/auth.js';
import { findParticipantsWithIcds, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER } from './repository.js';
import { READERS, scopeOf } from './routes.js';
import { EndedParticipants, EndRemovedIcdQuery, ParticipantPage, RemovedIcdQuery } from './schemas.js';
import { endParticipantsWithIcds, MOST_ENDED_AT_ONCE } from './writes.js';

const AUTHORITY: readonly Access[] = [Role.admin, Role.registryAuthority];

/**
 * The participants whose ICD the loaded code list removed (docs/design/participants.md, "Identifiers"):
 * listed for their provider and the authority, ended by the authority; never ended by the registry on its own.
 */
const removedIcdParticipants: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        summary:
          "addition: the participants whose ICD the loaded Peppol code list removed (past its removal date), a provider's own only",
        description:
          'Such a participant is never changed nor ended by the registry itself: its provider may delete it, the authority ' +
          'ends them with DELETE /rest/api/removed-icd-participants. Empty while no code list is loaded.',
        querystring: RemovedIcdQuery,
        response: { 200: ParticipantPage },
      },
      config: { access: READERS, mediaTypes: ['removed-icd-participants.find'] },
    },
    async (request) => {
      const page = pageRequest(request.query, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER);
      const removed = (await app.catalogue.identifierSchemes()).removedIcds();
      const { total, rows } = await findParticipantsWithIcds(app.db, removed, scopeOf(request), page);
      return pageOf(rows, total, page);
    },
  );

  app.delete(
    '/',
    {
      schema: {
        summary: `addition: ends the participants whose ICD the code list removed (of one ICD with \`icd\`), at most ${MOST_ENDED_AT_ONCE} a call`,
        description:
          'Each is deleted as DELETE /participants/{identifier} deletes it (the SML and Directory deliveries follow, the audit ' +
          'names the caller). A 400 (code `IcdNotRemoved`) when `icd` names an ICD not removed: its participants stay.',
        querystring: EndRemovedIcdQuery,
        response: { 200: EndedParticipants },
      },
      config: { access: AUTHORITY, mediaTypes: ['removed-icd-participants.end'] },
    },
    async (request) => {
      const removed = (await app.catalogue.identifierSchemes()).removedIcds();
      const { icd } = request.query;
      if (icd !== undefined && !removed.includes(icd)) {
        throw ValidationError.of('queryParameters', [
          {
            field: 'icd',
            code: 'IcdNotRemoved',
            rejectedValue: icd,
            defaultMessage: `ICD ${icd} is not removed from the Peppol code list: its participants stay`,
          },
        ]);
      }
      return app.db.transaction((tx) =>
        endParticipantsWithIcds(tx, actorOf(request), icd === undefined ? removed : [icd], app.catalogue),
      );
    },
  );
};

export default removedIcdParticipants;
