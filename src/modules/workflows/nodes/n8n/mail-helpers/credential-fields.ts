import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * Credential fields are stored as strings; n8n's mail credentials hold numbers and booleans. These
 * read them back the way n8n's own types would (`"465"` → 465, `"true"` → true), with n8n's defaults.
 */
export function portOf(data: Record<string, string>, fallback: number): number {
  const raw = data.port;
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new NodeOperationError(`The credential's port '${raw}' is not a TCP port`);
  return port;
}

export function flagOf(data: Record<string, string>, field: string, fallback: boolean): boolean {
  const raw = data[field];
  if (raw === undefined || raw === '') return fallback;
  return raw === 'true' || raw === '1';
}

export function hostOf(data: Record<string, string>): string {
  const host = data.host?.trim();
  if (!host) throw new NodeOperationError("The credential has no 'host'");
  return host;
}
