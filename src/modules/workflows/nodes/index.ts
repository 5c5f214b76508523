/** The node catalogue, where the module and the engine's caller take their registry from. */
export { allNodeTypes, defaultNodeRegistry } from './catalogue.js';
