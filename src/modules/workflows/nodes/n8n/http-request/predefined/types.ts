/**
 * What an n8n credential class's `authenticate` does to a request, as small pieces the tables of this
 * folder combine: a header, a query parameter or basic auth (n8n's `auth: {username, password}`).
 */
export interface Target {
  /** A header carrying the secret: dropped on a cross-origin redirect, hidden in `$request`. */
  header(name: string, value: string): void;
  /** A header that is no secret (Notion-Version, Qualys's X-Requested-With, lemlist's User-Agent). */
  plain(name: string, value: string): void;
  /** A query parameter carrying the secret (hidden in `$request`). */
  query(name: string, value: string): void;
  /** Basic auth: the Authorization header of `user:password`. */
  basic(user: string, password: string): void;
  /** A header the request already has (n8n's Notion credential keeps a `Notion-Version` it was given). */
  has(name: string): boolean;
}

/** The credential's data; `need` reads a field it cannot do without (the node's error names it). */
export type Apply = (data: Record<string, string>, to: Target, need: (field: string) => string) => void;

/** n8n stores a boolean field as true/false; here it is the text the credential was saved with. */
export const isOn = (value: string | undefined, byDefault: boolean): boolean =>
  value === undefined || value === '' ? byDefault : value === 'true';

/** `Authorization: <scheme> <field>` (n8n's `'=Bearer {{$credentials.field}}'`). */
export const authorization =
  (field: string, scheme = 'Bearer'): Apply =>
  (_data, to, need) =>
    to.header('authorization', `${scheme} ${need(field)}`);

/** One header holding the field as it is (n8n's `'X-Api-Key': '={{$credentials.field}}'`). */
export const keyHeader =
  (name: string, field: string): Apply =>
  (_data, to, need) =>
    to.header(name, need(field));

/** One query parameter holding the field (n8n's `qs: {name: '={{$credentials.field}}'}`). */
export const keyQuery =
  (name: string, field: string): Apply =>
  (_data, to, need) =>
    to.query(name, need(field));

/** Basic auth of two fields (n8n's `auth: {username: …, password: …}`). */
export const basicOf =
  (userField: string, passwordField: string): Apply =>
  (_data, to, need) =>
    to.basic(need(userField), need(passwordField));
