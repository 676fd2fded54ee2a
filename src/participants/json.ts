import { jsonObject, jsonOf, jsonProperty } from '../http/held-json.js';
import { processListJson } from '../processes/json.js';
import { ParticipantFields, type Participant } from './schemas.js';

/** A participant as the `Participant` schema serializes it: its own fields, then its held processes' kept bytes. */
export function participantJson({ processes, ...fields }: Participant): Buffer {
  const own = jsonOf(ParticipantFields, fields);
  return processes === undefined ? own : jsonObject([own, jsonProperty('processes', processListJson(processes))]);
}
