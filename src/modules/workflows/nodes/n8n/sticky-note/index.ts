import { Type } from 'typebox';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';

const StickyNoteParameters = Type.Object(
  {
    content: Type.String({
      default:
        "## I'm a note \n**Double click** to edit me. [Guide](https://docs.n8n.io/workflows/sticky-notes/)",
    }),
    height: Type.Number({ default: 160 }),
    width: Type.Number({ default: 240 }),
    /** n8n's palette index (1–7) or, in newer exports, a custom colour string. */
    color: Type.Optional(Type.Union([Type.Number(), Type.String()])),
  },
  { additionalProperties: false },
);

/**
 * n8n's Sticky Note: a note on the canvas, kept with the workflow. It has no inputs or outputs, so
 * validation refuses any connection to it and the engine never reaches it.
 */
export const stickyNoteNode = defineNode({
  type: 'n8n-nodes-base.stickyNote',
  versions: [1],
  schema: StickyNoteParameters,
  inputs: 0,
  async execute() {
    throw new NodeOperationError('A sticky note does not run');
  },
});
