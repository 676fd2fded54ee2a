import { afterAll, afterEach } from 'vitest';
import { failOnViolations } from './helpers/openapi-responses.js';

// Set up before each test file, in whatever worker it runs (workers run several files, one after another): every
// response its apps send is checked against the OpenAPI description, after each test and after the file's hooks.
afterEach(failOnViolations);
afterAll(failOnViolations);
