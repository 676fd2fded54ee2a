/** The registry's version (package.json), put in by the build (web/vite.config.ts). */
declare const __REGISTRY_VERSION__: string;
