import { useContext } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { FormProblem, useLoad } from '../components/ui.js';
import { when } from '../format.js';
import { I18n, useT } from '../i18n.js';

/** How many removals the card names; the rest are counted (GET /rest/api/catalogue/removals lists them all). */
const NAMED_REMOVALS = 10;

/** The count of a paged listing (one row asked for: only its total is needed). */
const totalOf = (call: Promise<{ data?: { totalElements: number }; error?: unknown; response: Response }>) =>
  ok(call).then((found) => found.totalElements);

/**
 * What needs the reader's attention among the participants it may see (a provider its own, the authority all): what
 * they lose at the coming code-list removal dates, organization identifiers that break their scheme's rule, ICDs the
 * code list removed, organizations Enhetsregisteret does not confirm. Nothing is shown while nothing needs attention.
 */
export function ParticipantAttentionCard() {
  const t = useT();
  const { language } = useContext(I18n);
  const removals = useLoad(
    () => ok(api.GET('/rest/api/catalogue/removals', { params: { query: { days: 90, limit: NAMED_REMOVALS } } })),
    [],
  );
  const counts = useLoad(
    async () => ({
      identifierFaults: await totalOf(api.GET('/rest/api/identifier-faults', { params: { query: { size: 1 } } })),
      removedIcds: await totalOf(api.GET('/rest/api/removed-icd-participants', { params: { query: { size: 1 } } })),
      registerFlags: await totalOf(api.GET('/rest/api/national-register/flags', { params: { query: { size: 1 } } })),
    }),
    [],
  );
  const coming = removals.data?.removals ?? [];
  const found = counts.data;
  const lines = [
    found && found.identifierFaults > 0 ? t('attentionIdentifierFaults', { count: found.identifierFaults }) : '',
    found && found.removedIcds > 0 ? t('attentionRemovedIcds', { count: found.removedIcds }) : '',
    found && found.registerFlags > 0 ? t('attentionRegisterFlags', { count: found.registerFlags }) : '',
  ].filter(Boolean);
  if (coming.length === 0 && lines.length === 0 && !removals.problem && !counts.problem) return null;
  return (
    <section class="card" aria-labelledby="attention-heading">
      <h2 id="attention-heading">{t('attentionTitle')}</h2>
      {coming.length > 0 ? (
        <>
          <p>{t('attentionRemovalsIntro')}</p>
          <ul class="removals">
            {coming.map((removal) => (
              <li
                key={`${removal.participant.identifier} ${removal.process.identifier} ${removal.documentType?.identifier ?? ''}`}
              >
                {t('attentionRemoval', {
                  when: when(removal.removedFrom, language),
                  participant: removal.participant.qualifiedIdentifier,
                  what: removal.documentType?.qualifiedIdentifier ?? removal.process.qualifiedIdentifier,
                })}
              </li>
            ))}
          </ul>
          {(removals.data?.total ?? 0) > coming.length ? (
            <p>{t('attentionMoreRemovals', { count: (removals.data?.total ?? 0) - coming.length })}</p>
          ) : null}
        </>
      ) : null}
      {lines.map((line) => (
        <p key={line}>{line}</p>
      ))}
      <FormProblem problem={removals.problem ?? counts.problem} />
    </section>
  );
}
