import { envSchema } from 'env-schema';
import { Type, type Static } from 'typebox';

const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  /** A PostgreSQL server; without it the embedded PostgreSQL keeps its data in REGISTRY_DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_DATA_DIR: Type.String({ default: './data' }),
  REGISTRY_ADMIN_USERNAME: Type.String({ default: 'admin', minLength: 1 }),
  REGISTRY_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 12 })),
  LOG_LEVEL: Type.String({ default: 'info' }),
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT: Type.Integer({ default: 1024 * 1024, minimum: 1 }),
});

export type Config = Static<typeof ConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return envSchema<Config>({ schema: ConfigSchema, data: env, dotenv: false });
}
