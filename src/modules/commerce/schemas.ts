import { type Static, Type } from 'typebox';
import { ListEnvelope, Timestamp } from '../../core/http/schemas.js';
import { ENVIRONMENT_NAMES, INTENSITIES, PRODUCT_TYPES, VOLATILITIES } from './domain.js';

const Intensity = Type.Enum(INTENSITIES, { description: 'light, medium or strong' });
const Id = Type.String({ minLength: 1, maxLength: 100 });

export const BlendParams = Type.Object({ blendId: Id });
export const ProductParams = Type.Object({ id: Id });

export const ScentCategory = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  image: Type.String({ description: 'URL' }),
  mood: Type.String({ description: 'Comma-separated mood words' }),
  popularNotes: Type.Array(Type.String()),
  complementaryCategories: Type.Array(Type.String()),
});

export const ScentNote = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  image: Type.String({ description: 'URL' }),
  category: Type.String({ description: 'Category name' }),
  categoryId: Type.String(),
  intensity: Type.Enum(INTENSITIES),
  volatility: Type.Enum(VOLATILITIES),
  mood: Type.Array(Type.String()),
  complementaryNotes: Type.Array(Type.String()),
});

export const NotesQuery = Type.Object(
  {
    category: Type.Optional(Type.String({ maxLength: 100, description: 'Category id' })),
    searchTerm: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

const NoteInput = Type.Object(
  {
    id: Id,
    ratio: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100,
      description: 'Fraction (0, 1], or a percentage when the ratios sum to 100',
    }),
  },
  { additionalProperties: false },
);
const Occasions = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 2000 });

export const CreateBlendBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    isPublic: Type.Optional(Type.Boolean()),
    composition: Type.Object(
      {
        notes: Type.Array(NoteInput, { minItems: 1, maxItems: 15 }),
        baseIntensity: Type.Optional(Intensity),
      },
      { additionalProperties: false },
    ),
    profile: Type.Optional(
      Type.Object({ occasions: Type.Optional(Occasions) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: false },
);
export type CreateBlendInput = Static<typeof CreateBlendBody>;

export const UpdateBlendBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    isPublic: Type.Optional(Type.Boolean()),
    composition: Type.Optional(
      Type.Object(
        {
          notes: Type.Optional(Type.Array(NoteInput, { minItems: 1, maxItems: 15 })),
          baseIntensity: Type.Optional(Intensity),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
    profile: Type.Optional(
      Type.Object({ occasions: Type.Optional(Occasions) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateBlendInput = Static<typeof UpdateBlendBody>;

const CompositionView = Type.Object({
  notes: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      ratio: Type.Number(),
      category: Type.Optional(Type.String()),
      volatility: Type.Optional(Type.String()),
    }),
  ),
  baseIntensity: Type.Enum(INTENSITIES),
});
const ProfileView = Type.Object({
  categories: Type.Array(Type.String()),
  mood: Type.Array(Type.String()),
  occasions: Type.Array(Type.String()),
});
const UsedIn = Type.Object({
  productId: Type.String(),
  productName: Type.String(),
  orderId: Type.String(),
  orderDate: Timestamp,
});
const ExpertAnalysis = Type.Object({
  notes: Type.String(),
  longevity: Type.String(),
  sillage: Type.String(),
  recommendations: Type.Array(Type.String()),
  pyramid: Type.Object({ top: Type.Number(), heart: Type.Number(), base: Type.Number() }),
  longevityScore: Type.Number({ minimum: 0, maximum: 1 }),
  sillageScore: Type.Number({ minimum: 0, maximum: 1 }),
});
const CompatibleProduct = Type.Object({
  id: Type.String(),
  name: Type.String(),
  image: Type.String(),
  compatibilityScore: Type.Number({
    minimum: 0,
    maximum: 1,
    description: '0 (poor) to 1 (ideal pyramid for the product)',
  }),
});

export const BlendView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  isPublic: Type.Boolean(),
  isOwner: Type.Boolean(),
  composition: CompositionView,
  profile: ProfileView,
  expert_analysis: Type.Optional(ExpertAnalysis),
  compatibleProducts: Type.Optional(Type.Array(CompatibleProduct)),
  usedIn: Type.Array(UsedIn, {
    description: "The reader's own orders that used this blend (never another customer's)",
  }),
  usageCount: Type.Integer({ minimum: 0, description: 'Order lines of anyone that used this blend' }),
});
export type BlendViewT = Static<typeof BlendView>;

export const DeletedView = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});

export const RecommendationsQuery = Type.Object(
  {
    category: Type.Optional(Type.String({ maxLength: 100 })),
    mood: Type.Optional(Type.String({ maxLength: 50 })),
    occasion: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  },
  { additionalProperties: false },
);
export const RecommendationView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  matchScore: Type.Number({ minimum: 0, maximum: 1 }),
  composition: CompositionView,
  profile: ProfileView,
  reasoning: Type.String(),
});

export const TestProductBody = Type.Object(
  {
    productId: Id,
    variantId: Type.Optional(Id),
    intensity: Intensity,
    environment: Type.Enum(ENVIRONMENT_NAMES as [string, ...string[]], {
      description: 'Where the product is used',
    }),
  },
  { additionalProperties: false },
);
export type TestProductInput = Static<typeof TestProductBody>;

export const TestProductResult = Type.Object({
  productName: Type.String(),
  blendName: Type.String(),
  compatibility: Type.Object({ score: Type.Number({ minimum: 0, maximum: 1 }), description: Type.String() }),
  performance: Type.Object({ burnTime: Type.String(), throwStrength: Type.String(), notes: Type.String() }),
  recommendations: Type.Object({
    intensityAdjustment: Type.String(),
    notesBalance: Type.String(),
    usage: Type.String(),
  }),
  visualization: Type.Object({
    colorPalette: Type.Array(Type.String({ pattern: '^#[0-9A-F]{6}$' })),
    moodImages: Type.Array(Type.String()),
  }),
});

const VariantView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sku: Type.String(),
  price: Type.Number({ description: 'Major units, two decimals' }),
  stock: Type.Integer({ description: 'Available: on hand minus reserved' }),
  properties: Type.Record(Type.String(), Type.Unknown()),
});
export const ProductView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.Enum(PRODUCT_TYPES),
  description: Type.String(),
  image: Type.String(),
  currency: Type.String(),
  properties: Type.Record(Type.String(), Type.Unknown()),
  variants: Type.Array(VariantView),
  createdAt: Timestamp,
});
export type ProductViewT = Static<typeof ProductView>;
export const ProductList = ListEnvelope(ProductView);
