import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { ensureAdmin } from './users/bootstrap.js';

const config = loadConfig();
const db = await openDatabase(config);
const admin = await ensureAdmin(db, config.REGISTRY_ADMIN_USERNAME, config.REGISTRY_ADMIN_PASSWORD);
const app = await buildApp({ db, logger: { level: config.LOG_LEVEL }, bodyLimit: config.BODY_LIMIT });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  await db.close();
});

const address = await app.listen({ port: config.PORT, host: config.HOST });
app.log.info({ database: db.kind }, `registry listening on ${address}`);
if (admin.generatedPassword) {
  console.log(`\nFirst ADMIN created: username '${admin.username}', password '${admin.generatedPassword}' (shown once)\n`);
}
