import { jsonArray, jsonObject, jsonOf } from '../http/held-json.js';
import { processJson } from '../processes/json.js';
import type { ReceivableProcess } from './repository.js';
import { ProcessReceivableSince } from './schemas.js';

/** An `OrganizationProcessList` as bytes: each process's kept bytes with its `receivableSince` after them. */
export const organizationProcessesJson = (found: readonly ReceivableProcess[]): Buffer =>
  jsonArray(
    found.map(({ process, receivableSince }) =>
      jsonObject([processJson(process), jsonOf(ProcessReceivableSince, { receivableSince })]),
    ),
  );
