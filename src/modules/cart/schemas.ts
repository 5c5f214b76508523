import { type Static, Type } from 'typebox';
import { documentedOnly } from '../../core/http/openapi-route.js';
import { Nullable, Timestamp } from '../../core/http/schemas.js';
import { COUNTRY_CODE_PATTERN } from './address.js';

/** What isMoneyAmount (core/money.ts) checks in the service, with its own message: the document says it. */
const MONEY = documentedOnly({ multipleOf: 0.01 });
const MONEY_UP_TO_9_DIGITS = documentedOnly({ multipleOf: 0.01, maximum: 999_999_999.99 });

const CustomizationsBody = Type.Object(
  {
    fragrance: Type.Optional(Type.String({ maxLength: 100 })),
    fragranceId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    giftWrapped: Type.Optional(Type.Boolean()),
    giftMessage: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const AddItemBody = Type.Object(
  {
    productId: Type.String({ minLength: 1, maxLength: 100 }),
    variantId: Type.String({ minLength: 1, maxLength: 100 }),
    quantity: Type.Integer({ minimum: 1, maximum: 99 }),
    customizations: Type.Optional(CustomizationsBody),
  },
  { additionalProperties: false },
);

export const UpdateItemBody = Type.Object(
  {
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 99 })),
    customizations: Type.Optional(CustomizationsBody),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const NoteBody = Type.Object(
  { note: Type.String({ maxLength: 1000 }) },
  { additionalProperties: false },
);

export const ItemParams = Type.Object({ itemId: Type.String({ minLength: 1, maxLength: 100 }) });

const CartItem = Type.Object({
  id: Type.String(),
  productId: Type.String(),
  variantId: Type.String(),
  name: Type.String(),
  variantName: Type.String(),
  sku: Type.String(),
  price: Type.Number(),
  quantity: Type.Integer(),
  lineTotal: Type.Number(),
  image: Type.String(),
  customizations: Type.Object({
    fragrance: Type.Optional(Type.String()),
    fragranceId: Type.Optional(Type.String()),
    fragranceName: Type.Optional(Type.String()),
    giftWrapped: Type.Boolean(),
    giftMessage: Type.Optional(Type.String()),
  }),
});

export const CartView = Type.Object({
  id: Type.String(),
  customerId: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  items: Type.Array(CartItem),
  itemCount: Type.Integer(),
  subtotal: Type.Number(),
  discounts: Type.Array(
    Type.Object({
      code: Type.String(),
      description: Type.String(),
      type: Type.String(),
      value: Type.Number({ description: 'percentage points, or the fixed amount' }),
      amount: Type.Number(),
      applies: Type.Boolean({ description: 'false while the code’s conditions do not hold (amount 0)' }),
    }),
  ),
  discountTotal: Type.Number(),
  estimatedTax: Type.Number(),
  estimatedTotal: Type.Number(),
  currency: Type.String(),
  notes: Type.String(),
  checkoutId: Nullable(Type.String()),
  checkoutExpires: Nullable(Timestamp),
  inventoryReserved: Type.Boolean(),
  readyForCheckout: Type.Boolean(),
});

export const DiscountCodeBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 50 }) },
  { additionalProperties: false },
);
export const CodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 50 }) });

export const ShippingBody = Type.Object(
  {
    address: Type.Object(
      {
        postalCode: Type.String({ minLength: 1, maxLength: 20 }),
        country: Type.String({
          minLength: 2,
          maxLength: 2,
          description: 'ISO 3166-1 alpha-2 code (any case); postalCode must be valid for it',
          ...documentedOnly({ pattern: COUNTRY_CODE_PATTERN }),
        }),
        state: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 3,
            description: 'Required, and checked, where the country has states: US, CA, AU',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const ShippingView = Type.Object({
  estimates: Type.Array(
    Type.Object({
      method: Type.String(),
      carrier: Type.String(),
      cost: Type.Number(),
      estimatedDelivery: Type.String(),
      estimatedDeliveryMin: Type.String({ format: 'date' }),
      estimatedDeliveryMax: Type.String({ format: 'date' }),
    }),
  ),
  freeShippingEligible: Type.Boolean(),
  freeShippingThreshold: Type.Number(),
  amountToFreeShipping: Type.Number(),
});

export const CreateDiscountBody = Type.Object(
  {
    code: Type.String({ minLength: 3, maxLength: 50, pattern: '^[A-Za-z0-9_-]+$' }),
    description: Type.Optional(Type.String({ maxLength: 200 })),
    type: Type.Enum(['percentage', 'fixed_amount', 'free_shipping'] as const),
    value: Type.Number({
      minimum: 0,
      maximum: 100000,
      description:
        'percentage: a whole number from 1 to 100; fixed_amount: an amount above 0 with at most 2 decimals',
      ...MONEY,
    }),
    minSubtotal: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 10000000,
        description: 'An amount with at most 2 decimals',
        ...MONEY,
      }),
    ),
    startsAt: Type.Optional(Type.String({ format: 'date-time' })),
    endsAt: Type.Optional(Type.String({ format: 'date-time' })),
    // The column is a 32-bit integer on PostgreSQL; no shop needs more uses of one code.
    usageLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    stackable: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateDiscountBodyT = Static<typeof CreateDiscountBody>;

export const DiscountView = Type.Object({
  id: Type.String(),
  code: Type.String(),
  description: Type.String(),
  type: Type.String(),
  value: Type.Number(),
  minSubtotal: Type.Number(),
  startsAt: Nullable(Timestamp),
  endsAt: Nullable(Timestamp),
  usageLimit: Nullable(Type.Integer()),
  usedCount: Type.Integer(),
  stackable: Type.Boolean(),
  createdAt: Timestamp,
});

export const VariantParams = Type.Object({ variantId: Type.String({ minLength: 1, maxLength: 100 }) });
export const InventoryBody = Type.Object(
  { onHand: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }) },
  { additionalProperties: false },
);
export const InventoryView = Type.Object({
  variantId: Type.String(),
  onHand: Type.Integer(),
  reserved: Type.Integer(),
  available: Type.Integer(),
});

/**
 * A storefront id: a string, or a JSON number that is a safe integer. A larger number has already
 * been rounded by the JSON parse (2^53 + 1 reads as 2^53), so two different ids would read as one:
 * it is refused, and the storefront sends such ids as strings.
 */
const Scalar = Type.Union([
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
]);

/** The storefront's order (a Shopify-style order webhook payload); unknown fields are ignored. */
export const OrderBody = Type.Object({
  id: Scalar,
  email: Type.Optional(Type.String({ maxLength: 254 })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
  customer: Type.Object({ id: Type.Optional(Scalar), email: Type.Optional(Type.String({ maxLength: 254 })) }),
  checkout_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  note_attributes: Type.Optional(
    Type.Array(Type.Object({ name: Type.String({ maxLength: 100 }), value: Type.Unknown() }), {
      maxItems: 50,
    }),
  ),
  line_items: Type.Array(
    Type.Object({
      product_id: Scalar,
      variant_id: Scalar,
      quantity: Type.Integer({ minimum: 1, maximum: 999 }),
      price: Type.Union([
        Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,2})?$' }),
        Type.Number({ minimum: 0, ...MONEY_UP_TO_9_DIGITS }),
      ]),
      properties: Type.Optional(
        Type.Array(Type.Object({ name: Type.String({ maxLength: 100 }), value: Type.Unknown() }), {
          maxItems: 50,
        }),
      ),
    }),
    { minItems: 1, maxItems: 250 },
  ),
});
export type OrderBodyT = Static<typeof OrderBody>;

export const OrderView = Type.Object({
  id: Type.String(),
  storefrontOrderId: Type.String(),
  customer: Type.Record(Type.String(), Type.Unknown()),
  lineItems: Type.Array(
    Type.Object({
      productId: Type.String(),
      variantId: Type.String(),
      quantity: Type.Integer(),
      price: Type.Number(),
      blendId: Nullable(Type.String()),
    }),
  ),
  total: Type.Number(),
  currency: Type.String(),
  checkoutId: Nullable(Type.String()),
  createdAt: Timestamp,
});
