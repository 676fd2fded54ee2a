import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';

const RESOURCES = [
  'participant',
  'process',
  'document-type',
  'access-point',
  'access-point-provider',
  'service-provider',
  'transport-profile',
  'capability',
  'user',
  'sign-in-lock',
  'register-flag',
  'identifier-scheme',
  'removal-notice',
] as const;
const OPERATIONS = ['create', 'update', 'delete', 'transfer', 'expire', 'migrate', 'withdraw'] as const;

/** The most JSON one page of the audit or the feed carries unless CHANGE_PAGE_MAX_BYTES says otherwise: 4 MiB. */
export const DEFAULT_PAGE_MAX_BYTES = 4 * 1024 * 1024;
const BUDGET = `the service's byte budget (${DEFAULT_PAGE_MAX_BYTES / 1024 / 1024} MiB by default)`;

const ResourceKind = Type.Union(
  RESOURCES.map((resource) => Type.Literal(resource)),
  { title: 'ChangeResource' },
);
const OperationKind = Type.Union(
  OPERATIONS.map((operation) => Type.Literal(operation)),
  { title: 'ChangeOperation' },
);

const REMOVAL_NOTICE =
  "addition: a `removal-notice` (shown to its service provider and the authority) says what the provider's live " +
  'participants lose at one coming removal instant of the code lists, as `{ provider: { identifier, title }, removedFrom, participants, ' +
  'entries: [{ resource: "process" | "document-type", identifier, qualifiedIdentifier, participants }], listing }`: `participants` of ' +
  'theirs lose `entries` (each lost by its `participants`) at `removedFrom`, listed one by one by `listing` (GET /rest/api/catalogue/removals). ' +
  'Logged with the catalogue change that sets, moves or clears a date: `create` when their participants come to lose something at that ' +
  'instant, `update` when what they lose then changes, `delete` (after null) when nothing of theirs goes then any more, the date moved or cleared';

export const ChangeEntry = Type.Object(
  {
    seq: Type.Optional(
      Type.Integer({
        description:
          'the position in the change log: dense, in commit order. For ADMIN and REGISTRY_AUTHORITY only: it counts ' +
          "every provider's changes, so a SERVICE_PROVIDER's entries carry none",
      }),
    ),
    resource: ResourceKind,
    identifier: Type.String({
      description:
        'participants and register flags: `iso6523-actorid-upis::{icd}:{organizationIdentifier}`; removal notices: the ' +
        "service provider's UUID; others: the UUID",
    }),
    operation: OperationKind,
    changedAt: Type.String({ format: 'date-time' }),
    origin: Type.Union([Type.Literal('api'), Type.Literal('cli'), Type.Literal('system')], {
      description:
        "api: a request; cli: the operator's command line; system: the first start, the demo set, the expiry sweep " +
        "or the national register's re-check",
    }),
    user: Nullable(
      Type.Object(
        { identifier: Nullable(Uuid()), username: Type.String(), role: Type.String() },
        { title: 'ChangeUser' },
      ),
    ),
    actingProvider: Nullable(Uuid({ description: 'the service provider or access point provider the user acts for' })),
    requestId: Nullable(Type.String()),
    before: Type.Unknown({
      description: `the resource as the API showed it before (null on create); never a password. ${REMOVAL_NOTICE}`,
    }),
    after: Type.Unknown({ description: 'the resource as the API shows it after (null on delete); never a password' }),
  },
  { title: 'ChangeEntry' },
);
export type ChangeEntry = Static<typeof ChangeEntry>;

const Filters = {
  resource: Type.Optional(ResourceKind),
  identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 600 })),
  operation: Type.Optional(OperationKind),
  user: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'user name, any letter case' })),
  provider: Type.Optional(Uuid({ description: 'a service provider: changes it made or of its participants' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'changed at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'changed before' })),
};
export type ChangeFilters = { [K in keyof typeof Filters]?: string };

export const AuditQuery = Type.Object({ ...PageQuery, ...Filters });
export const AUDIT_PAGE_RULE =
  `A page whose JSON would pass ${BUDGET} is served at a smaller size that divides the size asked, ` +
  'from the same first entry: its `size` and `number` say which page it is, so the next one is `page=number+1` at that `size`.';
export type AuditQuery = Static<typeof AuditQuery>;
export const AuditPage = PageSchema(ChangeEntry, 'ChangeEntryPage');

const MAX_FEED_WAIT_SECONDS = 60;

export const FeedQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'the cursor: the `next` of the page before, entries after it (none: from the start of the log)',
    }),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 100,
    description:
      `the most entries answered; a page also stops before its JSON would pass ${BUDGET}, one entry at least, ` +
      'and `next` is then its last entry',
  }),
  wait: Type.Integer({
    minimum: 0,
    maximum: MAX_FEED_WAIT_SECONDS,
    default: 0,
    description: 'long poll: with no entry after the cursor, wait up to this many seconds for one',
  }),
  ...Filters,
});
export type FeedQuery = Static<typeof FeedQuery>;

export const FeedPage = Type.Object(
  {
    entries: Type.Array(ChangeEntry),
    next: Type.String({
      description:
        'the cursor to ask with next: every entry up to it was answered or is outside your view. Opaque: it is ' +
        'sealed, a new one at every answer, and tells nothing of the changes outside your view; any instance takes it',
    }),
  },
  { title: 'ChangeFeed' },
);
export type FeedPage = Static<typeof FeedPage>;
