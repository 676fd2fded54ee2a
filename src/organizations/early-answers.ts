import { NOT_HELD } from '../core/held.js';
import { decodedSegment, type EarlyRoute } from '../http/early-answers/dispatcher.js';
import { plainResponseType, vendorMediaType } from '../http/media-types.js';
import { NEGOTIATED_VARY } from '../http/public-caching.js';
import type { HeldParticipants } from '../participants/held-participants.js';
import { parseOrganization } from '../participants/identifiers.js';
import { organizationProcessesJson } from './json.js';
import { organizationProcessesHeld, type HeldProcesses } from './repository.js';
import { ORGANIZATION_PROCESSES_MEDIA_TYPES, ORGANIZATION_PROCESSES_ROUTE } from './routes.js';

/** The database view the public lookup reads (an anonymous caller's: the standby's, with standbys). */
export interface PublicLookupView {
  heldParticipants: Pick<HeldParticipants, 'held'>;
  catalogue: HeldProcesses;
}

const OWN_TYPES = ORGANIZATION_PROCESSES_MEDIA_TYPES.map(vendorMediaType);

/**
 * Organization processes as memory answers them to an anonymous caller with a plain Accept header, when the
 * participants and the catalogue held have read every change heard (`organizationProcessesHeld`). A caller with
 * credentials has them checked by the route, and an organization without a live participant gets the route's 404.
 */
export function organizationEarlyRoutes(view: PublicLookupView): EarlyRoute[] {
  return [
    {
      route: ORGANIZATION_PROCESSES_ROUTE,
      answer: ({ qualifiedIdentifier = '' }, headers) => {
        if (headers.authorization !== undefined) return undefined;
        const mediaType = plainResponseType(headers.accept, OWN_TYPES);
        const organization = mediaType && parseOrganization(decodedSegment(qualifiedIdentifier));
        const found = organization
          ? organizationProcessesHeld(view.heldParticipants, view.catalogue, organization)
          : NOT_HELD;
        if (!mediaType || found === NOT_HELD) return undefined;
        return {
          body: organizationProcessesJson(found),
          contentType: `${mediaType};charset=UTF-8`,
          vary: NEGOTIATED_VARY,
          api: true,
        };
      },
    },
  ];
}
