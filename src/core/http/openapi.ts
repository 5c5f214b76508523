import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { completeDocument, type OpenApiObject } from './openapi-document.js';
import { transformRoute } from './openapi-route.js';

const DESCRIPTION = [
  'One server for the platform: API keys, customer tokens and quotas; workflow automation with webhooks;',
  'commerce (catalogue, custom blends, cart, discounts, orders); language models behind Ollama- and',
  'OpenAI-compatible APIs; documents and a knowledge base; flows (Flowise-compatible) and agents with',
  'conversations; and game-platform integration.',
  '',
  'Authentication: an API key as `Authorization: Bearer <key>` (or in `X-API-Key` / `X-WORKFLOW-API-KEY` /',
  '`X-N8N-API-KEY`),',
  'or on customer-facing operations a customer token minted by a key. Each operation says which, and the',
  'scope it needs, in its description; public operations have `security: []`.',
  '',
  'Errors: every platform error has the body `Error` (`{error, code, message, details, requestId}`) with',
  '`code` from a closed list. The Ollama-, OpenAI- and Flowise-compatible operations answer in the error',
  'body their clients parse, with the same fields beside it. A method a path does not serve is a 405',
  'with an `Allow` header.',
].join('\n');

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json and /reference. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'API Platform',
        version,
        description: DESCRIPTION,
        // package.json has no license and is private: no rights are granted.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative: the document is served by the server it describes, whatever its address.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'API key',
            description:
              'An API key (`PROD_API_…` or `DEV_API_…`) as a bearer token; the `X-API-Key`, ' +
              '`X-WORKFLOW-API-KEY` and `X-N8N-API-KEY` (n8n clients) headers are accepted too.',
          },
          customerToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'A short-lived customer token from POST /v1/auth/tokens, on customer-facing operations only.',
          },
        },
      },
    },
    hideUntagged: false,
    // Fastify answers HEAD on every GET route: the document says so (HEAD either documented or not served).
    exposeHeadRoutes: true,
    transform: transformRoute,
    transformObject: (documents) =>
      completeDocument((documents as { openapiObject: OpenApiObject }).openapiObject),
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
