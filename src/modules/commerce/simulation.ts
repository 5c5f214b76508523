import type { Catalog } from './catalog.js';
import { percent, pyramidOf, round, weighted, weights } from './composition.js';
import {
  ENVIRONMENTS,
  type Environment,
  type Intensity,
  type Product,
  type ProductVariant,
  type Pyramid,
  type ResolvedNote,
} from './domain.js';

/** Grams of wax a wick burns per hour, by wax type. */
const BURN_RATE_G_PER_HOUR: Record<string, number> = {
  soy: 7,
  'coconut-soy': 6.5,
  paraffin: 8,
  beeswax: 5,
};
/** Millilitres a reed diffuser evaporates per day. */
const DIFFUSER_ML_PER_DAY = 1.5;
/** The fragrance load each product type is designed around; the throw scales with load / typical. */
const TYPICAL_LOAD: Record<Product['type'], number> = {
  candle: 0.08,
  diffuser: 0.25,
  room_spray: 0.12,
  perfume: 0.18,
};
const INTENSITY_FACTOR: Record<Intensity, number> = { light: 0.7, medium: 1, strong: 1.3 };
/** The room size (m²) a product's throw is rated for. */
const REFERENCE_AREA = 15;

/** 1 − ½·Σ|share − ideal| over top/heart/base: 1 is the product's ideal pyramid, 0 the opposite. */
export function compatibilityScore(pyramid: Pyramid, product: Pick<Product, 'ideal'>): number {
  const d =
    Math.abs(pyramid.top - product.ideal.top) +
    Math.abs(pyramid.heart - product.ideal.heart) +
    Math.abs(pyramid.base - product.ideal.base);
  return round(Math.min(1, Math.max(0, 1 - d / 2)));
}

function compatibilityDescription(score: number): string {
  if (score >= 0.85)
    return 'Excellent match: the blend’s pyramid is close to what this product renders best.';
  if (score >= 0.7) return 'Good match: the blend performs well in this product with small trade-offs.';
  if (score >= 0.5)
    return 'Fair match: some stages of the blend will be muted or overstated in this product.';
  return 'Poor match: the blend’s structure works against this product; consider another format.';
}

interface SimulationInput {
  blendName: string;
  notes: readonly ResolvedNote[];
  product: Product;
  variant: ProductVariant | undefined;
  intensity: Intensity;
  environment: Environment;
  catalog: Catalog;
  asset: (path: string) => string;
}

export function simulateProduct(input: SimulationInput) {
  const { notes, product, intensity, environment, catalog } = input;
  const pyramid = pyramidOf(notes);
  const score = compatibilityScore(pyramid, product);
  const strongShare = notes.filter((n) => n.note.intensity === 'strong').reduce((a, n) => a + n.ratio, 0);
  const load = Number(product.properties.fragranceLoad ?? TYPICAL_LOAD[product.type]);
  const area = ENVIRONMENTS[environment];
  const throwScore =
    ((load / TYPICAL_LOAD[product.type]) * INTENSITY_FACTOR[intensity] * (0.8 + 0.4 * strongShare)) /
    Math.sqrt(area / REFERENCE_AREA);
  const throwStrength =
    throwScore < 0.5 ? 'light' : throwScore < 0.8 ? 'moderate' : throwScore < 1.2 ? 'strong' : 'very strong';

  return {
    productName: product.name,
    blendName: input.blendName,
    compatibility: { score, description: compatibilityDescription(score) },
    performance: {
      burnTime: lifetime(product, input.variant, pyramid),
      throwStrength,
      notes: `${capitalise(throwStrength)} throw in a ${area} m² ${environment.replace('-', ' ')} at ${intensity} intensity (throw index ${round(throwScore)}); ${stageNote(pyramid, product)}`,
    },
    recommendations: {
      intensityAdjustment: intensityAdvice(throwScore, intensity),
      notesBalance: balanceAdvice(pyramid, product),
      usage: usageAdvice(product, environment),
    },
    visualization: {
      colorPalette: palette(notes, catalog),
      moodImages: weighted(notes, (n) => n.note.mood)
        .slice(0, 3)
        .map((mood) => input.asset(`moods/${mood}.svg`)),
    },
  };
}

/** Burn time of a candle (wax weight ÷ burn rate × wicks), or the life of other formats. */
function lifetime(product: Product, variant: ProductVariant | undefined, pyramid: Pyramid): string {
  const v = { ...product.properties, ...(variant?.properties ?? {}) };
  const label = variant ? ` (${variant.name})` : '';
  switch (product.type) {
    case 'candle': {
      const rate = BURN_RATE_G_PER_HOUR[String(v.waxType)] ?? BURN_RATE_G_PER_HOUR.soy ?? 7;
      const hours = Number(v.waxWeightGrams ?? 0) / (rate * Number(v.wicks ?? 1));
      return `${Math.round(hours * 0.9)}–${Math.round(hours * 1.1)} hours${label}`;
    }
    case 'diffuser':
      return `about ${Math.round(Number(v.diffuserVolumeMl ?? 0) / DIFFUSER_ML_PER_DAY / 7)} weeks of diffusion${label}`;
    case 'room_spray':
      return `about ${Math.round(Number(v.diffuserVolumeMl ?? 0) / Number(v.mlPerSpray ?? 0.15))} sprays${label}`;
    case 'perfume':
      return `about ${Math.round(4 + 6 * pyramid.base)} hours of wear on skin${label}`;
  }
}

function stageNote(p: Pyramid, product: Product): string {
  if (product.type === 'candle')
    return `the hot throw favours heart and base notes (${percent(p.heart + p.base)} of the blend).`;
  if (product.type === 'room_spray') return `a spray shows top notes first (${percent(p.top)} of the blend).`;
  return `the full pyramid unfolds over time (top ${percent(p.top)}, heart ${percent(p.heart)}, base ${percent(p.base)}).`;
}

function intensityAdvice(throwScore: number, intensity: Intensity): string {
  if (throwScore < 0.5 && intensity !== 'strong')
    return 'Raise the intensity one step: the throw is faint for this space.';
  if (throwScore < 0.5)
    return 'Even at strong intensity the throw is faint here; choose a smaller room or a larger format.';
  if (throwScore > 1.4 && intensity !== 'light')
    return 'Lower the intensity one step: the throw may overwhelm this space.';
  return `Keep ${intensity} intensity: the throw suits this space.`;
}

function balanceAdvice(p: Pyramid, product: Product): string {
  const gaps = (['top', 'heart', 'base'] as const)
    .map((level) => ({ level, gap: p[level] - product.ideal[level] }))
    .sort((a, b) => Math.abs(b.gap) - Math.abs(a.gap));
  const worst = gaps[0];
  if (!worst || Math.abs(worst.gap) < 0.05) return 'The balance of top, heart and base suits this product.';
  const verb = worst.gap < 0 ? 'Add more' : 'Use fewer';
  return `${verb} ${worst.level} notes: ${percent(p[worst.level])} now, this product renders best near ${percent(product.ideal[worst.level])}.`;
}

function usageAdvice(product: Product, environment: Environment): string {
  const where = environment.replace('-', ' ');
  switch (product.type) {
    case 'candle':
      return `Burn 2–4 hours at a time in the ${where}, letting the melt pool reach the edge on the first burn; trim the wick to 5 mm.`;
    case 'diffuser':
      return `Place in the ${where} away from direct sun and flip the reeds weekly; use more reeds for a stronger scent.`;
    case 'room_spray':
      return `Mist 2–3 sprays into the air of the ${where} or onto linen from 30 cm; refresh as needed.`;
    case 'perfume':
      return 'Apply to pulse points after a shower; do not rub the skin, so the top notes can open.';
  }
}

/** The weighted mix of the families' colours, then each family's colour, heaviest first (hex). */
function palette(notes: readonly ResolvedNote[], catalog: Catalog): string[] {
  const byCategory = [...weights(notes, (n) => n.note.categoryId).entries()].sort(
    (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
  );
  const total = byCategory.reduce((a, [, w]) => a + w, 0) || 1;
  const mix = [0, 0, 0];
  const colors: string[] = [];
  for (const [id, w] of byCategory) {
    const hex = catalog.category(id)?.color ?? '#999999';
    const rgb = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
    rgb.forEach((c, i) => {
      mix[i] = (mix[i] ?? 0) + (c * w) / total;
    });
    colors.push(hex.toUpperCase());
  }
  const mixHex = `#${mix.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`.toUpperCase();
  return [...new Set([mixHex, ...colors])].slice(0, 6);
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
