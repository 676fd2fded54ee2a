import type { InputHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client.js';
import { useT } from '../i18n.js';
import { Field, useLoad } from './ui.js';

type Scheme = Schemas['IdentifierSchemeSummary'];

/** The loaded identifier schemes code list, read once per page that shows an ICD field (empty before a list is loaded). */
const useSchemes = () => useLoad(() => ok(api.GET('/rest/api/catalogue/identifier-schemes')), []).data ?? [];

/** A scheme as a reader recognizes it: `Organisasjonsnummer (NO, The Brønnøysund Register Centre)`. */
const schemeWords = (scheme: Scheme) => {
  const about = [scheme.country, scheme.issuingAgency].filter(Boolean).join(', ');
  return about ? `${scheme.schemeName} (${about})` : scheme.schemeName;
};

/** What the field says of the ICD typed: its scheme's name, that the list has no such ICD, or nothing yet. */
function icdHint(t: ReturnType<typeof useT>, schemes: Scheme[], icd: string): string | undefined {
  if (!/^\d{4}$/.test(icd) || schemes.length === 0) return undefined;
  const scheme = schemes.find((candidate) => candidate.icd === icd);
  return scheme ? t('icdName', { icd, name: schemeWords(scheme) }) : t('icdUnknown', { icd });
}

/**
 * An ICD field that says what the ICD is (`0192`: Enhetsregisteret, the Norwegian organization number) from the
 * loaded Participant Identifier Schemes code list, and offers every ICD of it with its name.
 */
export function IcdField(
  props: { label: string; value: string; error?: string } & InputHTMLAttributes<HTMLInputElement>,
) {
  const t = useT();
  const schemes = useSchemes();
  const list = useId();
  return (
    <>
      <Field {...props} inputMode="numeric" maxLength={4} list={list} hint={icdHint(t, schemes, props.value)} />
      <datalist id={list}>
        {schemes.map((scheme) => (
          <option key={scheme.icd} value={scheme.icd} label={schemeWords(scheme)} />
        ))}
      </datalist>
    </>
  );
}
