import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m601 from './601-documents.js';
import * as m602 from './602-document-language.js';
import * as m603 from './603-keyword-scope.js';
import * as m604 from './604-drop-full-text.js';
import * as m605 from './605-document-revision.js';
import * as m606 from './606-document-holds.js';
import * as m607 from './607-document-held-at.js';
import * as m608 from './608-chunk-vector-owner.js';
import * as m609 from './609-document-deleting-index.js';

/** The documents module's migrations, by name (the server and the CLI read this one list). */
export const documentsMigrations: MigrationSet = {
  '20261125_601_documents': m601,
  '20261129_602_document_language': m602,
  '20261129_603_keyword_scope': m603,
  '20261130_604_drop_full_text': m604,
  '20261130_605_document_revision': m605,
  '20261201_606_document_holds': m606,
  '20261202_607_document_held_at': m607,
  '20261202_608_chunk_vector_owner': m608,
  '20261202_609_document_deleting_index': m609,
};
