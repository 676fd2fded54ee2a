// tsc copies no SQL: the migrations and the data files next to the code are copied beside the build.
import { cpSync } from 'node:fs';

cpSync('src', 'dist', { recursive: true, filter: (source) => !source.endsWith('.ts') });
