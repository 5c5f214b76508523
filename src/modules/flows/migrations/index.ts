import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m701 from './701-flows.js';
import * as m702 from './702-flowise-objects.js';
import * as m703 from './703-message-used-tools.js';
import * as m704 from './704-document-store-holds.js';

/** The flows module's migrations, by name (the server and the CLI read this one list). */
export const flowsMigrations: MigrationSet = {
  '20261126_701_flows': m701,
  '20261129_702_flowise_objects': m702,
  '20261130_703_message_used_tools': m703,
  '20261201_704_document_store_holds': m704,
};
