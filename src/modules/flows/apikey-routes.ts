import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { hasService, mayUseModel, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { FlowService } from './flow-service.js';
import { FlowView, withFlowiseErrors } from './schemas.js';

const tags = ['Flows (Flowise API)'];
const flow = { auth: { service: 'flow' }, errorFormat: 'flowise' } as const;

/**
 * Flowise's chatflows of an API key, on the platform's keys: the caller's account's flows that key may
 * run (it has the `flow` service and may use the flow's model). A key of another account, revoked or
 * unknown is the same 400 as in Flowise, so the answer never tells which keys exist.
 */
export function apikeyRoutes(
  app: FastifyInstance,
  deps: { flows: FlowService; verifyApiKey: ((value: string) => Promise<Principal>) | null },
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/api/v1/chatflows/apikey/:apikey',
    {
      config: flow,
      schema: {
        tags,
        summary: 'The chatflows an API key of the account may run',
        params: Type.Object({ apikey: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: withFlowiseErrors({ 200: Type.Array(FlowView) }),
      },
    },
    async (request) => {
      const caller = principalOf(request);
      const key = deps.verifyApiKey ? await deps.verifyApiKey(request.params.apikey).catch(() => null) : null;
      if (!key || key.accountId !== caller.accountId)
        throw new AppError('VALIDATION_ERROR', 'The specified API key is invalid');
      if (!hasService(key, 'flow')) return [];
      const flows = await deps.flows.list(caller.accountId);
      return flows.filter((f) => f.model === null || mayUseModel(key, f.model));
    },
  );
}
