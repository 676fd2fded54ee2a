import { describe, expect, it } from 'vitest';
import { add, expectStatus, useAdministrationApp } from '../helpers/administration.js';
import { unique } from '../helpers/requests.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { processForm } from '../helpers/catalogue.js';

const { t, http, BASE, FORM } = useAdministrationApp({ path: '/rest/api/capabilities', form: 'capabilityFormDTO' });

const addCapability = (title = unique('Capability')) => add(t, BASE, { title });

describe('add, get, update and delete', () => {
  it('adds a capability as the authority and serves it to anonymous callers, as processes do', async () => {
    const created = expectStatus(await http.send('POST', BASE, { title: 'Receive invoices' }, t.users.authority), 201);
    expect(created).toEqual({ identifier: expect.stringMatching(/^[0-9a-f-]{36}$/), title: 'Receive invoices' });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`, null), 200)).toEqual(created);
  });

  it('renames a capability, and the processes that list it show the new title', async () => {
    const capability = await addCapability();
    const process = await add(
      t,
      '/rest/api/processes',
      processForm({ capabilities: [{ identifier: capability.identifier }] }),
    );
    const updated = expectStatus(
      await http.send('PUT', `${BASE}/${capability.identifier}`, { title: 'Send orders' }),
      200,
    );
    expect(updated).toEqual({ identifier: capability.identifier, title: 'Send orders' });
    const listed = expectStatus(await http.get(`/rest/api/processes/${process.identifier}`), 200);
    expect(listed.capabilities).toEqual([updated]);
  });
});

describe('validation, not found and conflicts', () => {
  it('requires a title on add and update', async () => {
    const capability = await addCapability();
    for (const response of [
      await http.send('POST', BASE, {}),
      await http.send('PUT', `${BASE}/${capability.identifier}`, { title: '' }),
    ]) {
      const body = expectErrorBody(response, 400, `Validation failed for object='${FORM}'. Error count: 1`);
      expectFieldError(body, FORM, 'title', 'NotEmpty', 'must not be empty');
    }
  });

  it('refuses to delete a capability that a process references', async () => {
    const capability = await addCapability();
    const process = await add(
      t,
      '/rest/api/processes',
      processForm({ capabilities: [{ identifier: capability.identifier }] }),
    );
    expectErrorBody(
      await http.remove(`${BASE}/${capability.identifier}`),
      409,
      `The capability '${capability.title}' is still used by 1 process(es)`,
    );
    expectStatus(await http.remove(`/rest/api/processes/${process.identifier}`), 204);
    expectStatus(await http.remove(`${BASE}/${capability.identifier}`), 204);
  });
});
