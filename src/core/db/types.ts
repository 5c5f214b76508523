/**
 * The tables of the whole platform. Each module adds its own tables by declaration merging:
 *   declare module '../../core/db/types.js' { interface Database { api_keys: ApiKeysTable } }
 * so core never imports a module.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging
export interface Database {}

/** Portable column conventions: timestamps are ISO 8601 text, booleans 0/1, JSON as text. */
export type Timestamp = string;
export type Bool = 0 | 1;
export type JsonText = string;

export type Dialect = 'sqlite' | 'postgres';
