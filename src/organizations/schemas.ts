import { Type, type Static } from 'typebox';
import { Process } from '../processes/schemas.js';

/** What an organization's process adds to the process, serialized apart from it (organizations/routes.ts). */
export const ProcessReceivableSince = Type.Object({
  receivableSince: Type.String({
    format: 'date',
    description:
      'addition: the day (UTC) since which a live participant of the organization has had this process. ' +
      "For a process given before the service recorded this (migration 012): the participant's last modification date, by which it had it at the latest",
  }),
});

/** The process's fields, then `receivableSince`: the answer is written in that order. */
export const OrganizationProcess = Type.Object(
  { ...Process.properties, ...ProcessReceivableSince.properties },
  { title: 'OrganizationProcess' },
);
export type OrganizationProcess = Static<typeof OrganizationProcess>;

export const OrganizationProcessList = Type.Array(OrganizationProcess, { title: 'OrganizationProcessList' });

export const OrganizationSummary = Type.Object(
  {
    qualifiedIdentifier: Type.String({
      description: 'the organization: `iso6523-actorid-upis::<icd>:<organizationIdentifier>`',
    }),
    name: Type.Union([Type.String(), Type.Null()], {
      description:
        'the name its business card publishes: that of its first registered live participant, null when it has none',
    }),
    providers: Type.Array(Type.Object({ title: Type.String() }, { title: 'OrganizationProvider' }), {
      description: 'the titles of the service providers that serve it (each once, by title)',
    }),
  },
  {
    title: 'OrganizationSummary',
    description: 'addition: who an organization is and who serves it, as public as its business card',
  },
);
export type OrganizationSummary = Static<typeof OrganizationSummary>;
