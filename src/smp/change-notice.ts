/**
 * One committed change, as the change log (branch `events`) announces it to caches; the contract of COMMON.md.
 * At integration this moves to where the change log keeps it.
 */
export interface ChangeNotice {
  seq: number;
  resource: 'participant' | 'process' | 'document-type' | 'access-point' | 'access-point-provider'
    | 'service-provider' | 'transport-profile' | 'capability' | 'user';
  /** Participants: `iso6523-actorid-upis::{icd}:{organizationIdentifier}` as stored; otherwise the id or key. */
  identifier: string;
  operation: 'create' | 'update' | 'delete' | 'transfer';
}
