import { useEffect, useState } from 'preact/hooks';
import { api, ok, page, warningOf, withoutField, type Problem, type Schemas } from '../api/client.js';
import { IcdField } from '../components/icd-field.js';
import { changedField, Field, fieldMessages, FormProblem, problemFrom, Status, useLoad } from '../components/ui.js';
import { flash } from '../flash.js';
import { contactForm, organizationNumberOf, otherMessages, processMessages, type ContactValues } from '../forms.js';
import { useT } from '../i18n.js';
import { href, navigate } from '../router.js';
import { NetworkPlace } from './network.js';
import { ProcessPicker } from './process-picker.js';

/** The API's fields the form shows messages at; `processes[i]` shows at the process sent at index i. */
const FORM_FIELDS = [
  'icd',
  'organizationIdentifier',
  'name',
  'contact',
  'contact.name',
  'contact.email',
  'contact.phoneNumber',
  'processes',
];

/** Add (no identifier) or edit a participant: contact and processes, with the catalogue's rules shown as hints. */
export function ParticipantForm({ identifier }: { identifier?: string }) {
  const t = useT();
  const catalogue = useLoad(
    () => page(api.GET('/rest/api/processes', { params: { query: { size: 2000, sort: ['title'] } } })),
    [],
  );
  const existing = useLoad(
    () =>
      identifier
        ? ok(api.GET('/rest/api/participants/{identifier}', { params: { path: { identifier } } }))
        : Promise.resolve(undefined),
    [identifier],
  );
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
    setContact({
      name: participant.contact.name,
      email: participant.contact.email ?? '',
      phoneNumber: participant.contact.phoneNumber ?? '',
    });
    const ids = (participant.processes ?? []).map((process) => process.identifier);
    setChosen(ids);
    setKept(new Set(ids));
  }, [existing.data]);

  const messages = processMessages(problem?.fields ?? {}, sent);
  // A process's message shows at the process; the others at their fields (the list's own at the picker).
  const unsent = problem && { ...problem, fields: otherMessages(problem.fields, sent) };
  const fieldError = fieldMessages(unsent, FORM_FIELDS);
  const choose = (next: string[]) => {
    setChosen(next);
    // The messages about processes were about the list as it was sent.
    setProblem((current) => withoutField(current, 'processes'));
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    setSent(chosen);
    const processes = chosen.map((id) => ({ identifier: id }));
    try {
      const answer = await (identifier
        ? api.PUT('/rest/api/participants/{identifier}', {
            params: { path: { identifier } },
            body: { contact: contactForm(contact), processes },
          })
        : api.POST('/rest/api/participants', {
            body: {
              icd: icd as Schemas['ICD'],
              organizationIdentifier: organizationNumberOf(organizationIdentifier),
              ...(name.trim() ? { name: name.trim() } : {}),
              contact: contactForm(contact),
              processes,
            },
          }));
      const saved = await ok(Promise.resolve(answer));
      const warning = warningOf(answer.response);
      flash(
        `${t('participantSaved', { name: `${saved.name ?? saved.organizationIdentifier} (${saved.qualifiedIdentifier})` })}${warning ? ` ${warning}.` : ''}`,
      );
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
      <form
        onSubmit={submit}
        aria-busy={loading}
        onInput={(event) => setProblem((current) => withoutField(current, changedField(event)))}
      >
        <fieldset class="grid">
          <IcdField
            label={t('icd')}
            name="icd"
            pattern="[0-9]{4}"
            required
            readOnly={Boolean(identifier)}
            value={icd}
            onInput={(event) => setIcd(event.currentTarget.value)}
            error={fieldError('icd')}
          />
          <Field
            label={t('organizationNumber')}
            name="organizationIdentifier"
            required
            readOnly={Boolean(identifier)}
            value={organizationIdentifier}
            onInput={(event) => setOrganizationIdentifier(event.currentTarget.value)}
            error={fieldError('organizationIdentifier')}
          />
          <Field
            label={t('organizationName')}
            name="name"
            readOnly={Boolean(identifier)}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            error={fieldError('name')}
          />
        </fieldset>
        <fieldset class="grid">
          <legend>{t('contact')}</legend>
          <Field
            label={t('contactName')}
            name="contact.name"
            required
            value={contact.name}
            onInput={(event) => setContact({ ...contact, name: event.currentTarget.value })}
            error={fieldError('contact.name') ?? fieldError('contact')}
          />
          <Field
            label={t('email')}
            name="contact.email"
            type="email"
            value={contact.email}
            onInput={(event) => setContact({ ...contact, email: event.currentTarget.value })}
            error={fieldError('contact.email')}
          />
          <Field
            label={t('phone')}
            name="contact.phoneNumber"
            type="tel"
            value={contact.phoneNumber}
            onInput={(event) => setContact({ ...contact, phoneNumber: event.currentTarget.value })}
            error={fieldError('contact.phoneNumber')}
          />
        </fieldset>
        <ProcessPicker
          catalogue={catalogue.data?.content ?? []}
          icd={icd}
          chosen={chosen}
          kept={kept}
          messages={messages}
          error={fieldError('processes')}
          onChange={choose}
        />
        <FormProblem problem={unsent} shown={FORM_FIELDS} />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy || loading}>
            {busy ? t('working') : t('save')}
          </button>
          <a class="button" href={href('participants')}>
            {t('cancel')}
          </a>
        </div>
      </form>
    </section>
  );
}
