import { jsonArray, jsonOf } from '../http/held-json.js';
import { Process } from './schemas.js';

/** A process as its schema serializes it: a held one (the catalogue's) once, then its kept bytes. */
export const processJson = (process: Process): Buffer => jsonOf(Process, process);

/** A list of processes (`ProcessList`) as bytes. */
export const processListJson = (processes: readonly Process[]): Buffer => jsonArray(processes.map(processJson));
