import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { FLAG_STATES } from './checks.js';

const FlagStateKind = Type.Enum(FLAG_STATES, {
  title: 'RegisterFlagState',
  description:
    'unconfirmed: registered while Enhetsregisteret did not answer, not confirmed since; unknown: the register ' +
    'has no such organization; deleted: the register has deleted (or removed) it',
});

/** A live participant whose organization Enhetsregisteret does not (or did not yet) confirm. */
export const FlaggedParticipant = Type.Object(
  {
    qualifiedIdentifier: Type.String({
      description: "the participant's `iso6523-actorid-upis::0192:{organization number}`",
    }),
    participantIdentifier: Uuid({ description: 'the participant (its UUID)' }),
    serviceProvider: Uuid({ description: 'the service provider that registered it' }),
    name: Nullable(Type.String()),
    state: FlagStateKind,
    deletedOn: Nullable(
      Type.String({ format: 'date', description: "the register's deletion date (`slettedato`), when it gave one" }),
    ),
    flaggedSince: Type.String({ format: 'date-time', description: 'since when the organization is in this state' }),
    checkedAt: Nullable(
      Type.String({ format: 'date-time', description: "the register's last answer for it; null: it never answered" }),
    ),
  },
  { title: 'RegisterFlag' },
);
export type FlaggedParticipant = Static<typeof FlaggedParticipant>;

export const FlaggedParticipantPage = PageSchema(FlaggedParticipant, 'RegisterFlagPage');
export const FlagQuery = Type.Object({
  ...PageQuery,
  state: Type.Optional(FlagStateKind),
});
