// The stylesheet is bundled by esbuild (scripts/build-portal.mjs); the import only needs to exist.
declare module '*.css';
