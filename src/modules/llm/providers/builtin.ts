import { Type } from 'typebox';
import type { ProviderDefinition } from '../types.js';

/** The built-in models: in-process, no server, no key. */
export const builtinProviderDefinition: ProviderDefinition = {
  kind: 'builtin',
  configSchema: Type.Object({}),
  async create(deps) {
    const { BuiltinProvider } = await import('../builtin/index.js');
    return new BuiltinProvider(deps);
  },
};
