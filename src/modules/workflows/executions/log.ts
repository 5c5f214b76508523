/**
 * The logger the workflows module writes to below its routes: the app's logger fits it, and nothing
 * there needs the HTTP framework's types.
 */
export interface Log {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}
