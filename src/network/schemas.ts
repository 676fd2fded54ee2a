import { Type } from 'typebox';
import { Nullable } from '../core/schemas.js';
import { MIGRATION_KEY_PATTERN } from './sml-client.js';
import { ServiceProviderSummary } from '../participants/schemas.js';

export const DeliveryStatusList = Type.Array(
  Type.Object(
    {
      target: Type.String({ description: '`sml` or `directory`' }),
      pending: Type.Integer({ description: 'participant changes behind the cursor, not yet delivered' }),
      setAside: Type.Integer({
        description:
          'organizations set aside: their delivery keeps failing while the target answers the others; retried with back-off',
      }),
      oldestPendingSeconds: Type.Number({
        description:
          'age of the oldest change not delivered, behind the cursor or of an organization set aside; 0 with none',
      }),
      attempts: Type.Integer({
        description: 'failed attempts of the cursor since its last success (the target failing for everyone)',
      }),
      lastError: Nullable(Type.String()),
      lastErrorAt: Nullable(Type.String({ format: 'date-time' })),
    },
    { title: 'DeliveryStatus' },
  ),
  { title: 'DeliveryStatusList' },
);

const pending = Type.Literal('pending');
const heldElsewhere = Type.Literal('held_elsewhere');
const refused = Type.Literal('refused');
const setAside = Type.Literal('set_aside');
const noProcess = Type.Literal('no_process');

const SmlRefusal = Nullable(
  Type.Object(
    {
      fault: Nullable(
        Type.String({
          description:
            "the SML's fault element (BadRequestFault, NotFoundFault, UnauthorizedFault), or `soap:Client` for a request it could not read",
        }),
      ),
      code: Nullable(
        Type.String({
          description: "BDMSL's error code, e.g. `ERR-106`; the Directory's HTTP status, e.g. `HTTP 400`",
        }),
      ),
      message: Type.String(),
    },
    { title: 'NetworkError' },
  ),
);

const Since = Nullable(Type.String({ format: 'date-time', description: 'when the participant came to this state' }));
const NextAttemptAt = Nullable(Type.String({ format: 'date-time', description: 'set_aside: when it is tried again' }));
const NO_PROCESS =
  "no_process: your participant has no process, so it has no part in the organization's registration (nor say over it)";

export const NetworkState = Type.Object(
  {
    participant: Type.String({ description: '`iso6523-actorid-upis::{icd}:{organizationIdentifier}`' }),
    sml: Type.Object(
      {
        state: Type.Union(
          [
            Type.Literal('registered'),
            pending,
            setAside,
            heldElsewhere,
            refused,
            Type.Literal('migrating_out'),
            noProcess,
            Type.Null(),
          ],
          {
            description:
              'registered: the SML holds it for this SMP; pending: a change waits for delivery (the last error is the ' +
              "SML's failure for everyone, retried); set_aside: its delivery keeps failing while the SML answers the others, so " +
              'it waits apart and is retried with back-off (the last error is its own); held_elsewhere: another SMP holds the ' +
              'organization (tried again on its next change, a migration, or `registry sml-reconcile`); refused: the SML refused ' +
              'it for good (tried again on its next change); migrating_out: a migration key was given out, and the organization is ' +
              `served until another SMP migrates it; ${NO_PROCESS}; null: no SML configured`,
          },
        ),
        since: Since,
        lastError: SmlRefusal,
        nextAttemptAt: NextAttemptAt,
      },
      { title: 'SmlState' },
    ),
    directory: Type.Object(
      {
        state: Type.Union(
          [Type.Literal('pushed'), pending, setAside, refused, Type.Literal('waiting_for_sml'), noProcess, Type.Null()],
          {
            description:
              'pushed: the Peppol Directory has its current state; pending: a change waits for delivery; set_aside: as ' +
              'for the SML; refused: the Directory refused it for good (a 4xx; tried again on its next change); waiting_for_sml: ' +
              `pushed once the SML holds it for this SMP; ${NO_PROCESS}; null: no Directory configured`,
          },
        ),
        since: Since,
        lastError: SmlRefusal,
        nextAttemptAt: NextAttemptAt,
      },
      { title: 'DirectoryState' },
    ),
  },
  { title: 'NetworkState' },
);

export const StuckQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: 'at most this many participants per state',
  }),
});

export const StuckParticipantList = Type.Array(
  Type.Object(
    {
      participant: Type.String(),
      target: Type.Union([Type.Literal('sml'), Type.Literal('directory')]),
      state: Type.Union([heldElsewhere, refused, pending, setAside]),
      since: Type.String({ format: 'date-time' }),
      lastError: SmlRefusal,
      servedBy: Type.Array(
        Type.Object(
          {
            name: Nullable(Type.String({ description: "the participant's name, as its provider gave it" })),
            serviceProvider: ServiceProviderSummary,
          },
          { title: 'StuckParticipantServedBy' },
        ),
        {
          description:
            'the participants of the organization now, one per service provider that serves it (none once every one is deleted)',
        },
      ),
    },
    { title: 'StuckParticipant' },
  ),
  { title: 'StuckParticipantList' },
);

export const MigrationKeyForm = Type.Object(
  {
    migrationKey: Type.String({
      minLength: 8,
      maxLength: 24,
      pattern: MIGRATION_KEY_PATTERN.source,
      format: 'printable-ascii',
      description:
        "the key the organization's previous provider got from the SML (PrepareToMigrate): 8 to 24 printable US-ASCII characters, " +
        'at least two each of upper-case letters, lower-case letters, digits and `@#$%()[]{}*^_-!~|+=`; never shown again',
    }),
  },
  { title: 'MigrationKeyForm' },
);

export const MigrationOut = Type.Object(
  {
    participant: Type.String(),
    migrationKey: Type.String({
      description:
        "for the organization's new provider, whose SMP calls the SML's Migrate with it; shown this once only",
    }),
  },
  { title: 'MigrationOut' },
);
