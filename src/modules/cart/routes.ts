import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { IdParams, ListEnvelope, listQueryOf, withErrors } from '../../core/http/schemas.js';
import type { Actor, CartService } from './cart-service.js';
import { DISCOUNT_LIST_SPEC, type DiscountService } from './discount-service.js';
import type { InventoryStore } from './inventory-store.js';
import { ORDER_LIST_SPEC, type OrderService } from './order-service.js';
import {
  AddItemBody,
  CartView,
  CodeParams,
  CreateDiscountBody,
  DiscountCodeBody,
  DiscountView,
  InventoryBody,
  InventoryView,
  ItemParams,
  NoteBody,
  OrderBody,
  OrderView,
  ShippingBody,
  ShippingView,
  UpdateItemBody,
  VariantParams,
} from './schemas.js';

/** The shopper's cart: customer-facing, so a customer token acts here for its customer. */
const commerce = { auth: { service: 'commerce', customerFacing: true } } as const;
/** The storefront's and the merchant's routes: API keys only, never a shopper's customer token. */
const storefront = { auth: { service: 'commerce', principals: ['api_key'] } } as const;
const admin = { auth: { service: 'commerce', operation: 'admin' } } as const;
const tags = ['Commerce: cart'];

function actorOf(request: FastifyRequest): Actor {
  const p = request.principal;
  if (!p) throw new Error('auth hook did not run');
  return { accountId: p.accountId, customerId: p.customerId ?? p.accountId };
}

export interface CartRouteDeps {
  carts: CartService;
  discounts: DiscountService;
  orders: OrderService;
  inventory: InventoryStore;
}

export function cartRoutes(app: FastifyInstance, deps: CartRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { carts, orders, inventory, discounts } = deps;
  const cartResponse = withErrors({ 200: CartView });

  r.get(
    '/api/cart',
    { config: commerce, schema: { tags, summary: "The customer's cart", response: cartResponse } },
    (req) => carts.get(actorOf(req)),
  );

  r.post(
    '/api/cart/items',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Add an item (prices from the catalogue)',
        body: AddItemBody,
        response: cartResponse,
      },
    },
    (req) => carts.addItem(actorOf(req), req.body),
  );

  r.patch(
    '/api/cart/items/:itemId',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Change an item',
        params: ItemParams,
        body: UpdateItemBody,
        response: cartResponse,
      },
    },
    (req) => carts.updateItem(actorOf(req), req.params.itemId, req.body),
  );

  r.delete(
    '/api/cart/items/:itemId',
    // Removing a line of one's own cart is an everyday write, not an Admin deletion: a write
    // scope suffices, and a delete scope (what DELETE asks elsewhere) is accepted too.
    {
      config: { auth: { service: 'commerce', operation: ['write', 'delete'], customerFacing: true } },
      schema: { tags, summary: 'Remove an item', params: ItemParams, response: cartResponse },
    },
    (req) => carts.deleteItem(actorOf(req), req.params.itemId),
  );

  r.post(
    '/api/cart/notes',
    {
      config: commerce,
      schema: { tags, summary: 'Set the order note', body: NoteBody, response: cartResponse },
    },
    (req) => carts.setNote(actorOf(req), req.body.note),
  );

  r.post(
    '/api/cart/checkout',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Prepare checkout: reserve the stock of every line',
        body: Type.Object({}, { additionalProperties: false }),
        response: cartResponse,
      },
    },
    (req) => carts.checkout(actorOf(req)),
  );

  r.post(
    '/api/cart/discounts',
    {
      config: commerce,
      schema: { tags, summary: 'Apply a discount code', body: DiscountCodeBody, response: cartResponse },
    },
    (req) => carts.applyDiscount(actorOf(req), req.body.code),
  );

  r.delete(
    '/api/cart/discounts/:code',
    {
      config: { auth: { service: 'commerce', operation: ['write', 'delete'], customerFacing: true } },
      schema: {
        tags,
        summary: 'Remove a discount code from the cart',
        params: CodeParams,
        response: cartResponse,
      },
    },
    (req) => carts.removeDiscount(actorOf(req), req.params.code),
  );

  r.post(
    '/api/cart/shipping-estimates',
    {
      config: commerce,
      schema: {
        tags,
        summary: 'Shipping rates and dates for an address',
        body: ShippingBody,
        response: withErrors({ 200: ShippingView }),
      },
    },
    (req) => carts.shippingEstimates(actorOf(req), req.body.address),
  );

  r.post(
    '/v1/discounts',
    {
      config: admin,
      schema: {
        tags: ['Commerce: discounts'],
        summary: 'Create a discount code (Admin)',
        body: CreateDiscountBody,
        response: withErrors({ 201: DiscountView }),
      },
    },
    async (req, reply) => {
      reply.code(201);
      return discounts.create(actorOf(req).accountId, req.body);
    },
  );

  r.get(
    '/v1/discounts',
    {
      config: admin,
      schema: {
        tags: ['Commerce: discounts'],
        summary: 'List discount codes (Admin)',
        querystring: listQueryOf(DISCOUNT_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(DiscountView) }),
      },
    },
    (req) => discounts.list(actorOf(req).accountId, req.query),
  );

  r.delete(
    '/v1/discounts/:id',
    {
      config: admin,
      schema: {
        tags: ['Commerce: discounts'],
        summary: 'Delete a discount code (Admin)',
        params: IdParams,
        response: withErrors({ 200: DiscountView }),
      },
    },
    (req) => discounts.delete(actorOf(req).accountId, req.params.id),
  );

  r.get(
    '/v1/inventory/:variantId',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Stock of a variant (Admin)',
        params: VariantParams,
        response: withErrors({ 200: InventoryView }),
      },
    },
    async (req) => {
      const level = await inventory.level(req.params.variantId);
      if (!level)
        throw new AppError('NOT_FOUND', `Variant '${req.params.variantId}' was not found`, {
          variantId: req.params.variantId,
        });
      return level;
    },
  );

  r.put(
    '/v1/inventory/:variantId',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Set stock on hand (Admin)',
        params: VariantParams,
        body: InventoryBody,
        response: withErrors({ 200: InventoryView }),
      },
    },
    async (req) => {
      const result = await inventory.setOnHand(req.params.variantId, req.body.onHand);
      if (result === null)
        throw new AppError('NOT_FOUND', `Variant '${req.params.variantId}' was not found`, {
          variantId: req.params.variantId,
        });
      if (result === 'below-reserved') {
        const level = await inventory.level(req.params.variantId);
        throw new AppError('CONFLICT', 'On hand cannot go below what is reserved', {
          reserved: level?.reserved ?? 0,
        });
      }
      return result;
    },
  );

  r.post(
    '/v1/orders',
    {
      config: storefront,
      schema: {
        tags: ['Commerce: orders'],
        summary: "The storefront's order intake (idempotent on the storefront order id)",
        body: OrderBody,
        response: withErrors({ 200: OrderView, 201: OrderView }),
      },
    },
    async (req, reply) => {
      const { created, order } = await orders.intake(actorOf(req).accountId, req.body);
      reply.code(created ? 201 : 200);
      return order;
    },
  );

  r.get(
    '/v1/orders',
    {
      config: storefront,
      schema: {
        tags: ['Commerce: orders'],
        summary: 'List orders',
        querystring: listQueryOf(ORDER_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(OrderView) }),
      },
    },
    (req) => orders.list(actorOf(req).accountId, req.query),
  );

  r.get(
    '/v1/orders/:id',
    {
      config: storefront,
      schema: {
        tags: ['Commerce: orders'],
        summary: 'An order',
        params: IdParams,
        response: withErrors({ 200: OrderView }),
      },
    },
    (req) => orders.get(actorOf(req).accountId, req.params.id),
  );
}
