import type { Catalog } from './catalog.js';
import { percent, pyramidOf, round, weighted } from './composition.js';
import rules from './data/analysis-rules.json' with { type: 'json' };
import type { Intensity, Pyramid, ResolvedNote } from './domain.js';

interface ExpertAnalysis {
  notes: string;
  longevity: string;
  sillage: string;
  recommendations: string[];
  pyramid: Pyramid;
  /** 0 (fleeting) to 1 (very long-lasting). */
  longevityScore: number;
  /** 0 (intimate) to 1 (enormous). */
  sillageScore: number;
}

type Level = keyof typeof rules.pyramid;
const LEVELS: Array<{ level: Level; volatility: 'top' | 'middle' | 'base' }> = [
  { level: 'top', volatility: 'top' },
  { level: 'heart', volatility: 'middle' },
  { level: 'base', volatility: 'base' },
];

const band = (bands: ReadonlyArray<{ upTo: number; label: string }>, score: number): string =>
  (bands.find((b) => score < b.upTo) ?? bands[bands.length - 1])?.label ?? '';

/** 0 for light, 0.5 for medium, 1 for strong. */
const intensityLevel = (intensity: Intensity): number => (rules.intensityWeight[intensity] - 1) / 2;

/** The expert analysis: a rules engine over the pyramid, intensity and pairings (thresholds in analysis-rules.json). */
export function analyseBlend(
  notes: readonly ResolvedNote[],
  baseIntensity: Intensity,
  catalog: Catalog,
): ExpertAnalysis {
  const pyramid = pyramidOf(notes);
  const noteIntensity = notes.reduce((acc, n) => acc + n.ratio * intensityLevel(n.note.intensity), 0);
  const strongShare = notes.filter((n) => n.note.intensity === 'strong').reduce((acc, n) => acc + n.ratio, 0);
  const longevityScore = clamp01(
    rules.longevity.baseShareWeight * pyramid.base + rules.longevity.intensityWeight * noteIntensity,
  );
  const sillageScore = clamp01(
    rules.sillage.baseIntensityWeight * intensityLevel(baseIntensity) +
      rules.sillage.strongNoteShareWeight * strongShare,
  );

  const recommendations: string[] = [];
  for (const { level, volatility } of LEVELS) {
    const range = rules.pyramid[level];
    const share = pyramid[level];
    if (share < range.min) {
      const suggestion = suggestFor(volatility, notes, catalog);
      recommendations.push(
        `${capitalise(level)} notes make up ${percent(share)} of the blend; perfumers typically use ${percent(range.min)}–${percent(range.max)}.` +
          (suggestion ? ` Consider adding ${suggestion}.` : ''),
      );
    } else if (share > range.max) {
      recommendations.push(
        `${capitalise(level)} notes make up ${percent(share)} of the blend, above the typical ${percent(range.min)}–${percent(range.max)}; reduce them so the other stages can show.`,
      );
    }
  }
  const { min, max } = rules.noteCount;
  if (notes.length < min) {
    recommendations.push(
      `With ${notes.length} note${notes.length === 1 ? '' : 's'} the blend may smell linear; ${min} to ${max} notes give the best results.`,
    );
  } else if (notes.length > max) {
    recommendations.push(
      `With ${notes.length} notes the accord may turn muddy; ${min} to ${max} notes give the best results.`,
    );
  }
  const dominant = notes.find((n) => n.ratio > rules.dominantNoteRatio && notes.length > 1);
  if (dominant)
    recommendations.push(
      `${dominant.note.name} is ${percent(dominant.ratio)} of the blend and may overpower the others.`,
    );
  const missing = missingComplements(notes, catalog);
  if (missing.length > 0) {
    recommendations.push(
      `Consider ${missing.map((m) => m.name).join(', ')}: classic partners of ${missing[0]?.partner}.`,
    );
  }
  if (recommendations.length === 0)
    recommendations.push('The pyramid is well balanced; no change is needed.');

  const families = weighted(notes, (n) => [catalog.categoryName(n.note.categoryId)]).slice(0, 2);
  const names = (volatility: string) =>
    notes
      .filter((n) => n.note.volatility === volatility)
      .map((n) => n.note.name)
      .join(', ') || 'none';
  return {
    notes:
      `A ${families.join('-').toLowerCase()} blend: top ${percent(pyramid.top)} (${names('top')}), ` +
      `heart ${percent(pyramid.heart)} (${names('middle')}), base ${percent(pyramid.base)} (${names('base')}).`,
    longevity: band(rules.longevity.bands, longevityScore),
    sillage: band(rules.sillage.bands, sillageScore),
    recommendations,
    pyramid,
    longevityScore: round(longevityScore),
    sillageScore: round(sillageScore),
  };
}

/** Complementary notes of the main notes that the blend lacks, the most recommended first. */
function missingComplements(
  notes: readonly ResolvedNote[],
  catalog: Catalog,
): Array<{ name: string; partner: string }> {
  const present = new Set(notes.map((n) => n.id));
  const votes = new Map<string, { weight: number; partner: string }>();
  for (const n of [...notes].sort((a, b) => b.ratio - a.ratio)) {
    if (n.ratio < rules.complementary.minRatioToConsider) continue;
    for (const id of n.note.complementaryNotes) {
      if (present.has(id)) continue;
      const vote = votes.get(id);
      if (vote) vote.weight += n.ratio;
      else votes.set(id, { weight: n.ratio, partner: n.note.name });
    }
  }
  return [...votes.entries()]
    .sort((a, b) => b[1].weight - a[1].weight || a[0].localeCompare(b[0]))
    .slice(0, rules.complementary.maxSuggestions)
    .map(([id, v]) => ({ name: catalog.note(id)?.name ?? id, partner: v.partner }));
}

function suggestFor(
  volatility: 'top' | 'middle' | 'base',
  notes: readonly ResolvedNote[],
  catalog: Catalog,
): string | null {
  const present = new Set(notes.map((n) => n.id));
  for (const n of [...notes].sort((a, b) => b.ratio - a.ratio || a.id.localeCompare(b.id))) {
    for (const id of n.note.complementaryNotes) {
      const candidate = catalog.note(id);
      if (candidate && !present.has(id) && candidate.volatility === volatility) return candidate.name;
    }
  }
  return catalog.notes.find((n) => n.volatility === volatility && !present.has(n.id))?.name ?? null;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
