import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json and /reference. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'API Platform',
        version,
        description:
          'Core API keys and quotas, workflow automation, commerce and game-platform integration. ' +
          'Every error has the body {error, code, message, details, requestId}.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key or customer token' },
          workflowKey: { type: 'apiKey', in: 'header', name: 'X-WORKFLOW-API-KEY' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }, { workflowKey: [] }, { apiKey: [] }],
    },
    hideUntagged: false,
  });
  await app.register(swaggerUi, {
    routePrefix: '/reference',
    staticCSP: true,
    uiConfig: { deepLinking: true },
  });
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
