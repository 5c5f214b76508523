import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m401 from './401-cart.js';
import * as m402 from './402-discounts-addresses.js';
import * as m403 from './403-holds-bigint.js';

/** The cart module's migrations, by name (the server and the CLI read this one list). */
export const cartMigrations: MigrationSet = {
  '20261123_401_cart': m401,
  '20261123_402_cart_discounts_addresses': m402,
  '20261123_403_cart_holds_order_total_bigint': m403,
};
