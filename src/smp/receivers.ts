import type { LiveOrganization, ParticipantsSnapshot } from '../participants/held-participants.js';
import type { Organization } from '../participants/identifiers.js';
import type { LiveParticipant } from '../participants/search-index.js';

/** A live participant of an organization as the SMP publishes it: its provider and its processes' ids. */
export type Receiver = LiveParticipant;

/** An organization's live participants as its service group needs them, and the first of their delete dates. */
export interface OrganizationReceivers {
  /** By provider id: whichever instance answers lists them alike. */
  receivers: readonly Receiver[];
  /** YYYY-MM-DD; null when none has a delete date. */
  nextDeleteDate: string | null;
}

const receiversOf = ({ participants, nextDeleteDate }: LiveOrganization): OrganizationReceivers => ({
  receivers: participants,
  nextDeleteDate,
});

/** The organization's receivers as the participants held have them; undefined when it has no live participant. */
export function heldReceiversOf(
  participants: ParticipantsSnapshot,
  organization: Organization,
): OrganizationReceivers | undefined {
  const live = participants.liveParticipantsOf(organization);
  return live && receiversOf(live);
}
