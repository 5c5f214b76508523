import type { Clock } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { analyseBlend } from './analysis.js';
import type { BlendStore } from './blend-store.js';
import type { Catalog } from './catalog.js';
import { pyramidOf, validateComposition, weighted } from './composition.js';
import type {
  Blend,
  BlendUsage,
  Environment,
  Intensity,
  NoteRatio,
  Product,
  ResolvedNote,
} from './domain.js';
import type { ProductStore } from './product-store.js';
import {
  type CustomerPreferences,
  checkFilters,
  NO_PREFERENCES,
  type RecommendationFilters,
  recommend,
} from './recommendations.js';
import type { BlendViewT, CreateBlendInput, TestProductInput, UpdateBlendInput } from './schemas.js';
import { compatibilityScore, simulateProduct } from './simulation.js';

/** Who acts: the account, and the customer of a customer token (or the account itself). */
export interface Actor {
  accountId: string;
  owner: string;
}

interface BlendServiceDeps {
  store: BlendStore;
  products: ProductStore;
  catalog: Catalog;
  clock: Clock;
  asset: (path: string) => string;
  /** Products with their static properties, for compatibility scores (loaded at boot). */
  productCatalog: readonly Product[];
  /** The customer's stated preferences (their profile), null without one. */
  preferences?: (accountId: string, customerId: string) => Promise<CustomerPreferences | null>;
}

type Detail = 'summary' | 'detail';

/**
 * Blends one customer may keep: `GET /api/custom-blends` answers all of them in one list (the spec
 * gives it no pages), so the list is bounded by what may be made.
 */
export const MAX_BLENDS_PER_CUSTOMER = 1_000;

/** Use-cases of custom blends: CRUD with validation, derived fields, recommendations, simulation. */
export class BlendService {
  constructor(private readonly deps: BlendServiceDeps) {}

  async list(actor: Actor): Promise<BlendViewT[]> {
    const blends = await this.deps.store.listOwn(actor.accountId, actor.owner, MAX_BLENDS_PER_CUSTOMER);
    const usage = await this.deps.store.usage(blends.map((b) => b.id));
    return blends.map((b) => this.view(b, actor, 'summary', usage.get(b.id) ?? []));
  }

  async get(actor: Actor, id: string): Promise<BlendViewT> {
    const blend = await this.readable(actor, id);
    const usage = await this.deps.store.usage([id]);
    return this.view(blend, actor, 'detail', usage.get(id) ?? []);
  }

  async create(actor: Actor, input: CreateBlendInput): Promise<BlendViewT> {
    const now = this.deps.clock.now().toISOString();
    const blend: Blend = {
      id: newId('blend'),
      accountId: actor.accountId,
      owner: actor.owner,
      name: input.name.trim(),
      description: input.description ?? '',
      isPublic: input.isPublic ?? false,
      notes: this.validate(input.composition.notes),
      baseIntensity: input.composition.baseIntensity ?? 'medium',
      occasions: input.profile?.occasions ?? [],
      createdAt: now,
      updatedAt: now,
    };
    // Counted and inserted in one locked step: creates racing at the bound cannot all pass it.
    if (
      !(await this.nameGuard(blend.name, () => this.deps.store.insertUnder(blend, MAX_BLENDS_PER_CUSTOMER)))
    )
      throw new AppError(
        'CONFLICT',
        `A customer holds at most ${MAX_BLENDS_PER_CUSTOMER} blends; delete one to make another`,
        { limit: MAX_BLENDS_PER_CUSTOMER },
      );
    return this.view(blend, actor, 'detail', []);
  }

  async update(actor: Actor, id: string, patch: UpdateBlendInput): Promise<BlendViewT> {
    const current = await this.owned(actor, id, 'change');
    const previous = Date.parse(current.updatedAt);
    const now = Math.max(this.deps.clock.now().getTime(), previous + 1);
    const next: Blend = {
      ...current,
      name: patch.name?.trim() ?? current.name,
      description: patch.description ?? current.description,
      isPublic: patch.isPublic ?? current.isPublic,
      notes: patch.composition?.notes ? this.validate(patch.composition.notes) : current.notes,
      baseIntensity: patch.composition?.baseIntensity ?? current.baseIntensity,
      occasions: patch.profile?.occasions ?? current.occasions,
      updatedAt: new Date(now).toISOString(),
    };
    await this.nameGuard(next.name, () => this.deps.store.update(next));
    const usage = await this.deps.store.usage([id]);
    return this.view(next, actor, 'detail', usage.get(id) ?? []);
  }

  async delete(actor: Actor, id: string): Promise<{ success: boolean; message: string; id: string }> {
    const blend = await this.owned(actor, id, 'delete');
    await this.deps.store.delete(actor.accountId, id);
    return { success: true, message: `Blend '${blend.name}' was deleted`, id };
  }

  /** From the customer's blends and profile preferences; the filters override the preferences. */
  async recommendations(actor: Actor, filters: RecommendationFilters) {
    checkFilters(this.deps.catalog, filters);
    const [history, preferences] = await Promise.all([
      this.deps.store.listOwn(actor.accountId, actor.owner, MAX_BLENDS_PER_CUSTOMER),
      this.deps.preferences?.(actor.accountId, actor.owner) ?? null,
    ]);
    return recommend(this.deps.catalog, history, filters, preferences ?? NO_PREFERENCES);
  }

  async testProduct(actor: Actor, id: string, input: TestProductInput) {
    const blend = await this.readable(actor, id);
    const product = await this.deps.products.product(input.productId);
    if (!product) throw notFound('PRODUCT_NOT_FOUND', 'Product', input.productId);
    const variant = input.variantId
      ? product.variants.find((v) => v.id === input.variantId)
      : product.variants[0];
    if (input.variantId && !variant) throw notFound('PRODUCT_NOT_FOUND', 'Product variant', input.variantId);
    return simulateProduct({
      blendName: blend.name,
      notes: this.resolve(blend.notes),
      product,
      variant,
      intensity: input.intensity as Intensity,
      environment: input.environment as Environment,
      catalog: this.deps.catalog,
      asset: this.deps.asset,
    });
  }

  /** For the cart: the customer's own blend or a public one of the account, else null. */
  async blendFor(actor: Actor, id: string): Promise<(Blend & { isOwner: boolean }) | null> {
    const blend = await this.deps.store.readable(actor.accountId, actor.owner, id);
    return blend ? { ...blend, isOwner: blend.owner === actor.owner } : null;
  }

  recordUsage(accountId: string, usage: BlendUsage): Promise<void> {
    return this.deps.store.recordUsage(accountId, usage);
  }

  private validate(notes: readonly NoteRatio[]): NoteRatio[] {
    return validateComposition(notes, (id) => this.deps.catalog.note(id) !== undefined);
  }

  private async readable(actor: Actor, id: string): Promise<Blend> {
    const blend = await this.deps.store.readable(actor.accountId, actor.owner, id);
    if (!blend) throw notFound('BLEND_NOT_FOUND', 'Blend', id);
    return blend;
  }

  /** Only the owner may change or delete; a public blend of someone else is 403, a private one 404. */
  private async owned(actor: Actor, id: string, what: 'change' | 'delete'): Promise<Blend> {
    const blend = await this.readable(actor, id);
    if (blend.owner !== actor.owner) {
      throw new AppError('FORBIDDEN', `Only the owner of blend '${id}' may ${what} it`, { id });
    }
    return blend;
  }

  private async nameGuard<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError('NAME_TAKEN', `You already have a blend named '${name}'`, { name });
      }
      throw error;
    }
  }

  private resolve(notes: readonly NoteRatio[]): ResolvedNote[] {
    const out: ResolvedNote[] = [];
    for (const n of notes) {
      const note = this.deps.catalog.note(n.id);
      if (note) out.push({ ...n, note });
    }
    return out;
  }

  private view(blend: Blend, actor: Actor, detail: Detail, usedIn: BlendUsage[]): BlendViewT {
    const { catalog } = this.deps;
    const notes = this.resolve(blend.notes);
    const view: BlendViewT = {
      id: blend.id,
      name: blend.name,
      description: blend.description,
      createdAt: blend.createdAt,
      updatedAt: blend.updatedAt,
      isPublic: blend.isPublic,
      isOwner: blend.owner === actor.owner,
      composition: {
        notes: notes.map((n) => ({
          id: n.id,
          name: n.note.name,
          ratio: n.ratio,
          category: catalog.categoryName(n.note.categoryId),
          volatility: n.note.volatility,
        })),
        baseIntensity: blend.baseIntensity,
      },
      profile: {
        categories: weighted(notes, (n) => [catalog.categoryName(n.note.categoryId)]),
        mood: weighted(notes, (n) => n.note.mood).slice(0, 6),
        occasions: blend.occasions,
      },
      // Order ids and dates are the ordering customer's: a reader sees their own orders, and of
      // everyone else's (other customers ordering a public blend) only how many there were.
      usedIn: usedIn
        .filter((u) => u.customerId !== null && u.customerId === actor.owner)
        .map(({ blendId: _, customerId: __, ...u }) => u),
      usageCount: usedIn.length,
    };
    if (detail === 'detail') {
      view.expert_analysis = analyseBlend(notes, blend.baseIntensity, catalog);
      const pyramid = pyramidOf(notes);
      view.compatibleProducts = this.deps.productCatalog
        .map((p) => ({
          id: p.id,
          name: p.name,
          image: this.deps.asset(p.image),
          compatibilityScore: compatibilityScore(pyramid, p),
        }))
        .sort((a, b) => b.compatibilityScore - a.compatibilityScore || a.id.localeCompare(b.id));
    }
    return view;
  }
}
