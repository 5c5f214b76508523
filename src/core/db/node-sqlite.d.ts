/**
 * The part of Node's built-in `node:sqlite` (Node 22.13+, used on Node 24: see sqlite-driver.ts) the
 * platform uses. @types/node stays on Node 20's major, which does not declare the module.
 */
declare module 'node:sqlite' {
  type SqlValue = null | number | bigint | string | Uint8Array;
  export class StatementSync {
    all(...parameters: SqlValue[]): unknown[];
    get(...parameters: SqlValue[]): unknown;
    run(...parameters: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
    iterate(...parameters: SqlValue[]): Iterator<unknown>;
    columns(): Array<{ name: string }>;
  }
  export class DatabaseSync {
    constructor(path: string, options?: { readOnly?: boolean });
    prepare(sql: string): StatementSync;
    exec(sql: string): void;
    close(): void;
  }
  export function backup(source: DatabaseSync, path: string, options?: { rate?: number }): Promise<number>;
}
