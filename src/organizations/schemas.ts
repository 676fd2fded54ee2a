import { Type, type Static } from 'typebox';
import { Process } from '../processes/schemas.js';

export const OrganizationProcess = Type.Object({
  ...Process.properties,
  receivableSince: Type.String({
    format: 'date',
    description: 'addition: the day (UTC) since which a live participant of the organization has had this process. '
      + 'For a process given before the service recorded this (migration 012): the participant\'s last modification date, by which it had it at the latest',
  }),
}, { title: 'OrganizationProcess' });
export type OrganizationProcess = Static<typeof OrganizationProcess>;

export const OrganizationProcessList = Type.Array(OrganizationProcess, { title: 'OrganizationProcessList' });
