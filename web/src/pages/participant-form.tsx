import { useEffect, useState } from 'preact/hooks';
import { api, ok, page, type Problem, type Schemas } from '../api/client.js';
import { Field, FormProblem, problemFrom, Status, useLoad } from '../components/ui.js';
import { contactForm, processMessages, type ContactValues } from '../forms.js';
import { useT } from '../i18n.js';
import { hintBlocks, hintText, processHint } from '../rules.js';
import { href, navigate } from '../router.js';
import { NetworkPlace } from './network.js';

type Process = Schemas['Process'];

const FORM_FIELDS = ['icd', 'organizationIdentifier', 'name', 'contact.name', 'contact.email', 'contact.phoneNumber', 'contact', 'processes'];


/** Add (no identifier) or edit a participant: contact and processes, with the catalogue's rules shown as hints. */
export function ParticipantForm({ identifier }: { identifier?: string }) {
  const t = useT();
  const catalogue = useLoad(() => page(api.GET('/rest/api/processes', { params: { query: { size: 2000, sort: ['title'] } } })), []);
  const existing = useLoad(() => (identifier
    ? ok(api.GET('/rest/api/participants/{identifier}', { params: { path: { identifier } } }))
    : Promise.resolve(undefined)), [identifier]);
  const [icd, setIcd] = useState('0192');
  const [organizationIdentifier, setOrganizationIdentifier] = useState('');
  const [name, setName] = useState('');
  const [contact, setContact] = useState<ContactValues>({ name: '', email: '', phoneNumber: '' });
  const [chosen, setChosen] = useState<string[]>([]);
  const [kept, setKept] = useState<Set<string>>(new Set());
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sent, setSent] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const participant = existing.data;
    if (!participant) return;
    setIcd(participant.icd);
    setOrganizationIdentifier(participant.organizationIdentifier);
    setName(participant.name ?? '');
    setContact({ name: participant.contact.name, email: participant.contact.email ?? '', phoneNumber: participant.contact.phoneNumber ?? '' });
    const ids = (participant.processes ?? []).map((process) => process.identifier);
    setChosen(ids);
    setKept(new Set(ids));
  }, [existing.data]);

  const chosenSet = new Set(chosen);
  const toggle = (process: Process, on: boolean) => setChosen(on ? [...chosen, process.identifier] : chosen.filter((id) => id !== process.identifier));
  const messages = processMessages(problem?.fields ?? {}, sent);
  const fieldError = (field: string) => problem?.fields[field];

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    setSent(chosen);
    const processes = chosen.map((id) => ({ identifier: id }));
    try {
      if (identifier) {
        await ok(api.PUT('/rest/api/participants/{identifier}', { params: { path: { identifier } }, body: { contact: contactForm(contact), processes } }));
      } else {
        await ok(api.POST('/rest/api/participants', {
          body: { icd: icd as Schemas['ICD'], organizationIdentifier: organizationIdentifier.trim(), ...(name.trim() ? { name: name.trim() } : {}), contact: contactForm(contact), processes },
        }));
      }
      navigate('participants');
    } catch (error) {
      setProblem(problemFrom(error));
    } finally {
      setBusy(false);
    }
  };

  const loading = catalogue.loading || existing.loading;
  return (
    <section>
      <h1>{identifier ? t('editParticipant') : t('addParticipant')}</h1>
      {loading ? <Status text={t('loading')} /> : null}
      <FormProblem problem={catalogue.problem ?? existing.problem} />
      {identifier ? <NetworkPlace identifier={identifier} /> : null}
      <form onSubmit={submit} aria-busy={loading}>
        <fieldset class="grid">
          <Field label={t('icd')} name="icd" inputMode="numeric" pattern="[0-9]{4}" maxLength={4} required readOnly={Boolean(identifier)} value={icd}
            onInput={(event) => setIcd(event.currentTarget.value)} error={fieldError('icd')} />
          <Field label={t('organizationNumber')} name="organizationIdentifier" required readOnly={Boolean(identifier)} value={organizationIdentifier}
            onInput={(event) => setOrganizationIdentifier(event.currentTarget.value)} error={fieldError('organizationIdentifier')} />
          <Field label={t('organizationName')} name="name" readOnly={Boolean(identifier)} value={name} onInput={(event) => setName(event.currentTarget.value)} error={fieldError('name')} />
        </fieldset>
        <fieldset class="grid">
          <legend>{t('contact')}</legend>
          <Field label={t('contactName')} name="contact.name" required value={contact.name} onInput={(event) => setContact({ ...contact, name: event.currentTarget.value })} error={fieldError('contact.name') ?? fieldError('contact')} />
          <Field label={t('email')} name="contact.email" type="email" value={contact.email} onInput={(event) => setContact({ ...contact, email: event.currentTarget.value })} error={fieldError('contact.email')} />
          <Field label={t('phone')} name="contact.phoneNumber" type="tel" value={contact.phoneNumber} onInput={(event) => setContact({ ...contact, phoneNumber: event.currentTarget.value })} error={fieldError('contact.phoneNumber')} />
        </fieldset>
        <fieldset>
          <legend>{t('processes')}</legend>
          {fieldError('processes') ? <p class="field-error">{fieldError('processes')}</p> : null}
          <ul class="process-choices">
            {(catalogue.data?.content ?? []).filter((process) => process.visible || chosenSet.has(process.identifier)).map((process) => {
              const hint = processHint(process, icd, chosenSet, kept);
              const inputId = `process-${process.identifier}`;
              const blocked = hint.restricted && !chosenSet.has(process.identifier);
              return (
                <li key={process.identifier} class={chosenSet.has(process.identifier) && hintBlocks(hint) ? 'warn' : undefined}>
                  <input type="checkbox" id={inputId} checked={chosenSet.has(process.identifier)} disabled={blocked}
                    aria-describedby={`${inputId}-hint${messages[process.identifier] ? ` ${inputId}-error` : ''}`}
                    onChange={(event) => toggle(process, event.currentTarget.checked)} />
                  <label for={inputId}>{process.title} <code class="id">{process.qualifiedIdentifier}</code></label>
                  <small id={`${inputId}-hint`} class="hint">{hintText(t, hint)}</small>
                  {messages[process.identifier] ? <p class="field-error" id={`${inputId}-error`}>{messages[process.identifier]}</p> : null}
                </li>
              );
            })}
          </ul>
        </fieldset>
        <FormProblem problem={problem} shown={FORM_FIELDS} />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy || loading}>{busy ? t('working') : t('save')}</button>
          <a class="button" href={href('participants')}>{t('cancel')}</a>
        </div>
      </form>
    </section>
  );
}
