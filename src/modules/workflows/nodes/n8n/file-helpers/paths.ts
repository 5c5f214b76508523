import type { Json } from '../../../engine/types.js';
import { getPath, setPath } from '../set/paths.js';

/** lodash `get` as n8n's file nodes use it (dot paths; prototype keys refused). */
export const getField = (json: Record<string, Json>, path: string): Json | undefined =>
  getPath(json, path, true);

/** lodash `set` as n8n's file nodes use it. */
export const setField = (json: Record<string, Json>, path: string, value: Json): void =>
  setPath(json, path, value, true);
