/** Texts of the audit trail's summaries (i18n.ts takes them into both languages). */
export const AUDIT_EN = {
  auditList: '{field}: {names}',
  auditAdded: '{field} added: {names}',
  auditRemoved: '{field} removed: {names}',
  auditFieldChanged: '{field} changed',
  auditFromTo: '{field}: {before} → {after}',
  auditLockOf: '{username} from {address}',
  operationLift: 'Lifted',
  originapi: 'No one signed in',
  origincli: 'The command line',
  originsystem: 'The registry itself',
} as const;

export const AUDIT_NB: Record<keyof typeof AUDIT_EN, string> = {
  auditList: '{field}: {names}',
  auditAdded: '{field} lagt til: {names}',
  auditRemoved: '{field} fjernet: {names}',
  auditFieldChanged: '{field} endret',
  auditFromTo: '{field}: {before} → {after}',
  auditLockOf: '{username} fra {address}',
  operationLift: 'Opphevet',
  originapi: 'Ingen innlogget',
  origincli: 'Kommandolinjen',
  originsystem: 'Registeret selv',
};
