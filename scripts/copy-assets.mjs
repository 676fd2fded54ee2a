// tsc copies no SQL: the migrations and the data files next to the code are copied beside the build.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function copyNonTs(from, to) {
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    const target = join(to, name);
    if (statSync(source).isDirectory()) copyNonTs(source, target);
    else if (!name.endsWith('.ts')) cpSync(source, target);
  }
}

copyNonTs('src', 'dist');
