import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { listQueryOf, withErrors } from '../../core/http/schemas.js';
import { swatchFor } from './assets-catalog.js';
import type { Actor, BlendService } from './blend-service.js';
import type { Catalog } from './catalog.js';
import { PRODUCT_LIST_SPEC, type ProductService } from './product-service.js';
import {
  BlendParams,
  BlendView,
  CreateBlendBody,
  DeletedView,
  NotesQuery,
  ProductList,
  ProductParams,
  ProductView,
  RecommendationsQuery,
  RecommendationView,
  ScentCategory,
  ScentNote,
  TestProductBody,
  TestProductResult,
  UpdateBlendBody,
} from './schemas.js';
import { categoryView, noteView } from './views.js';

/** The customer's blends: customer-facing, so a customer token acts here for its customer. */
const commerce = { auth: { service: 'commerce', customerFacing: true } } as const;
/** The catalogue: API keys only. */
const catalogue = { auth: { service: 'commerce' } } as const;
const tags = ['Commerce: custom blends'];
const productTags = ['Commerce: products'];

/** The customer of a customer token, or the key's own account (DESIGN.md). */
function actorOf(request: FastifyRequest): Actor {
  const p = request.principal;
  if (!p) throw new Error('auth hook did not run');
  return { accountId: p.accountId, owner: p.customerId ?? p.accountId };
}

export interface CommerceRouteDeps {
  blends: BlendService;
  products: ProductService;
  catalog: Catalog;
  asset: (path: string) => string;
}

export function commerceRoutes(app: FastifyInstance, deps: CommerceRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { blends, products, catalog, asset } = deps;

  r.get(
    '/api/custom-blends/categories',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Scent categories (fragrance families)',
        response: withErrors({ 200: Type.Object({ categories: Type.Array(ScentCategory) }) }),
      },
    },
    async () => ({ categories: catalog.categories.map((c) => categoryView(c, asset)) }),
  );

  r.get(
    '/api/custom-blends/notes',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Scent notes, by category id and a case-insensitive search over names and descriptions',
        querystring: NotesQuery,
        response: withErrors({ 200: Type.Object({ notes: Type.Array(ScentNote) }) }),
      },
    },
    async (request) => ({
      notes: catalog.searchNotes(request.query).map((n) => noteView(n, catalog, asset)),
    }),
  );

  r.get(
    '/api/custom-blends/recommendations',
    {
      config: commerce,
      schema: {
        tags,
        summary: "Blend recommendations from the customer's blends and the filters",
        querystring: RecommendationsQuery,
        response: withErrors({ 200: Type.Object({ recommendations: Type.Array(RecommendationView) }) }),
      },
    },
    async (request) => ({ recommendations: await blends.recommendations(actorOf(request), request.query) }),
  );

  r.get(
    '/api/custom-blends',
    {
      config: commerce,
      schema: {
        tags,
        summary: "The customer's own blends",
        response: withErrors({ 200: Type.Object({ blends: Type.Array(BlendView) }) }),
      },
    },
    async (request) => ({ blends: await blends.list(actorOf(request)) }),
  );

  r.post(
    '/api/custom-blends',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Create a blend',
        body: CreateBlendBody,
        response: withErrors({ 201: BlendView }),
      },
    },
    async (request, reply) => {
      const created = await blends.create(actorOf(request), request.body);
      reply.code(201);
      return created;
    },
  );

  r.get(
    '/api/custom-blends/:blendId',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'A blend with expert analysis, compatible products and usage',
        params: BlendParams,
        response: withErrors({ 200: BlendView }),
      },
    },
    async (request) => blends.get(actorOf(request), request.params.blendId),
  );

  r.patch(
    '/api/custom-blends/:blendId',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Update a blend (owner only)',
        params: BlendParams,
        body: UpdateBlendBody,
        response: withErrors({ 200: BlendView }),
      },
    },
    async (request) => blends.update(actorOf(request), request.params.blendId, request.body),
  );

  r.delete(
    '/api/custom-blends/:blendId',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Delete a blend (owner only)',
        params: BlendParams,
        response: withErrors({ 200: DeletedView }),
      },
    },
    async (request) => blends.delete(actorOf(request), request.params.blendId),
  );

  r.post(
    '/api/custom-blends/:blendId/test-product',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Simulate how a blend performs in a product',
        params: BlendParams,
        body: TestProductBody,
        response: withErrors({ 200: TestProductResult }),
      },
    },
    async (request) => blends.testProduct(actorOf(request), request.params.blendId, request.body),
  );

  r.get(
    '/assets/scents/:kind/:file',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'A scent image (SVG swatch) of a category, note, product or mood',
        params: Type.Object({
          kind: Type.Enum(['categories', 'notes', 'products', 'moods'] as const),
          file: Type.String({ pattern: '^[a-z0-9_-]{1,60}\\.svg$' }),
        }),
        response: withErrors({
          200: Type.String({ contentMediaType: 'image/svg+xml', description: 'An SVG image' }),
        }),
      },
    },
    async (request, reply) => {
      const { kind, file } = request.params;
      const image = swatchFor(catalog, kind, file.slice(0, -4));
      if (!image) throw new AppError('NOT_FOUND', `Asset '${kind}/${file}' was not found`, { kind, file });
      reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400');
      return image;
    },
  );

  r.get(
    '/v1/products',
    {
      config: catalogue,
      schema: {
        tags: productTags,
        summary: 'List products',
        querystring: listQueryOf(PRODUCT_LIST_SPEC),
        response: withErrors({ 200: ProductList }),
      },
    },
    async (request) => products.list(request.query),
  );

  r.get(
    '/v1/products/:id',
    {
      config: catalogue,
      schema: {
        tags: productTags,
        summary: 'Get a product with its variants',
        params: ProductParams,
        response: withErrors({ 200: ProductView }),
      },
    },
    async (request) => products.get(request.params.id),
  );
}
