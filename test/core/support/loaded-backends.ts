// Run as a child process: builds the platform on the embedded default (SQLite file, in-process
// queue and counters) and prints which optional backends' packages were loaded.

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config.js';

const OPTIONAL = ['pg', 'ioredis', 'bullmq', 'rate-limiter-flexible', 'mysql2'];
const require = createRequire(import.meta.url);
const loaded = () =>
  OPTIONAL.filter((name) =>
    Object.keys(require.cache).some((file) =>
      file.includes(`${path.sep}node_modules${path.sep}${name}${path.sep}`),
    ),
  );

const dataDir = mkdtempSync(path.join(tmpdir(), 'loaded-backends-'));
const { app } = await buildApp({
  config: parseConfig({ DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent' }),
  logger: false,
});
await app.ready();
const byDefault = loaded();
await app.close();
rmSync(dataDir, { recursive: true, force: true });
// The control: the same check sees a package once it is imported.
await import('pg');
console.log(JSON.stringify({ byDefault, afterImport: loaded() }));
