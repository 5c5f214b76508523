// `npm run sdk`: regenerates sdk/schema.d.ts from the OpenAPI document the server serves.
// Runs under tsx (it imports the TypeScript sources) and starts nothing: the app is built in
// process on an in-memory SQLite database with the default settings, and its document read
// with app.swagger(), the same object GET /openapi.json returns.
import { writeFileSync } from 'node:fs';
import { SCHEMA_FILE, schemaSource } from '../sdk/generate.js';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';

// Fixed settings, not the caller's environment: PLATFORM_SERVICES and friends change the routes,
// and the generated client must describe the default, full platform.
const config = parseConfig({ DATA_DIR: ':memory:', LOG_LEVEL: 'silent' });
const { app } = await buildApp({ config, logger: false });
let document;
try {
  await app.ready();
  document = app.swagger();
} finally {
  await app.close();
}
const source = await schemaSource(document);
writeFileSync(SCHEMA_FILE, source);
const operations = Object.values(document.paths ?? {}).reduce((n, item) => n + Object.keys(item).length, 0);
console.log(`${SCHEMA_FILE}: ${operations} operations, ${source.length} bytes`);
