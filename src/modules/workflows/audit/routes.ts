import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { withErrors } from '../../../core/http/schemas.js';
import { NoQuery } from '../executions/n8n-schemas.js';
import { AuditBody, AuditView } from './schemas.js';
import type { AuditService } from './service.js';

/** An audit reads every credential name, key and workflow of the account: admins only (n8n: owner). */
const admin = { auth: { service: 'workflow', operation: 'admin', endpointLimit: true } } as const;

/** n8n's `POST /api/v1/audit`: the account's security audit. */
export function auditRoutes(app: FastifyInstance, service: AuditService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/api/v1/audit',
    {
      config: admin,
      schema: {
        tags: ['Audit'],
        summary: "A security audit of the account (n8n's report shape)",
        description:
          "n8n's risk reports (credentials, database, nodes, filesystem, instance) over the account's workflows, credentials and executions, with the platform's own findings (API keys without IP rules). Only reports with findings are present; `[]` when there are none. Needs `workflow:admin`.",
        querystring: NoQuery,
        body: AuditBody,
        response: withErrors({ 200: AuditView }),
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal) throw new Error('auth hook did not run');
      return service.generate(principal.accountId, request.body?.additionalOptions ?? {});
    },
  );
}
