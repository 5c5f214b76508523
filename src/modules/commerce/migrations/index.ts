import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m101 from './101-catalog.js';
import * as m102 from './102-blends.js';
import * as m103 from './103-blend-usage-customer.js';

/** The commerce module's migrations, by name (the server and the CLI read this one list). */
export const commerceMigrations: MigrationSet = {
  '20261123_101_commerce_catalog': m101,
  '20261123_102_commerce_blends': m102,
  '20261123_103_commerce_blend_usage_customer': m103,
};
