import { afterAll, afterEach } from 'vitest';
import { failOnViolations } from './helpers/openapi-responses.js';
import { useTestHashCost } from './helpers/test-users.js';

// Set up before each test file, in whatever worker it runs (workers run several files, one after another): every
// response its apps send is checked against the OpenAPI description, after each test and after the file's hooks.
afterEach(failOnViolations);
afterAll(failOnViolations);

// Password hashes at the suite's cost (see TEST_HASH_N), set again for each file: one that sets another restores it.
useTestHashCost();
