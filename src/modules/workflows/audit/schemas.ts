import { Type } from 'typebox';
import { AUDIT_CATEGORIES } from './service.js';

const Category = Type.Union(
  AUDIT_CATEGORIES.map((c) => Type.Literal(c)),
  { description: 'A risk category of the report' },
);

/** n8n's `POST /api/v1/audit` body. */
export const AuditBody = Type.Object(
  {
    additionalOptions: Type.Optional(
      Type.Object(
        {
          daysAbandonedWorkflow: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 3650,
              description: 'Days without an execution after which a workflow counts as abandoned (90)',
            }),
          ),
          categories: Type.Optional(Type.Array(Category, { maxItems: AUDIT_CATEGORIES.length })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Location = Type.Object(
  {
    kind: Type.String({ description: '`node`, `credential` (n8n) or `apiKey` (the platform)' }),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    workflowId: Type.Optional(Type.String()),
    workflowName: Type.Optional(Type.String()),
    nodeId: Type.Optional(Type.String()),
    nodeName: Type.Optional(Type.String()),
    nodeType: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const Section = Type.Object({
  title: Type.String(),
  description: Type.String(),
  recommendation: Type.String(),
  location: Type.Optional(Type.Array(Location)),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const Report = Type.Object({ risk: Category, sections: Type.Array(Section) });

/** The reports with findings under n8n's names; an empty array when nothing was found (as n8n). */
export const AuditView = Type.Union([
  Type.Object({
    'Credentials Risk Report': Type.Optional(Report),
    'Database Risk Report': Type.Optional(Report),
    'Nodes Risk Report': Type.Optional(Report),
    'Filesystem Risk Report': Type.Optional(Report),
    'Instance Risk Report': Type.Optional(Report),
  }),
  Type.Array(Type.Never(), { maxItems: 0 }),
]);
