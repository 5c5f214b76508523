import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { Catalog } from './catalog.js';
import { pyramidOf, round, weighted } from './composition.js';
import type { Blend, Category, Intensity, Note, NoteRatio, ResolvedNote, Volatility } from './domain.js';

export interface RecommendationFilters {
  category?: string | undefined;
  mood?: string | undefined;
  occasion?: string | undefined;
}

/**
 * What a customer said they like (their profile): a query filter wins over the matching preference;
 * disliked notes are never proposed.
 */
export interface CustomerPreferences {
  /** Category ids, most liked first. */
  categories: readonly string[];
  /** Mood words (lower case). */
  moods: readonly string[];
  /** Note ids. */
  dislikedNotes: readonly string[];
  occasions: readonly string[];
}

export const NO_PREFERENCES: CustomerPreferences = {
  categories: [],
  moods: [],
  dislikedNotes: [],
  occasions: [],
};

export interface Recommendation {
  id: string;
  name: string;
  description: string;
  /**
   * 0–1: 0.45 family affinity (1 when asked for, 0.9 when preferred, else the share in the
   * customer's blends) + 0.30 mood fit + 0.25 pyramid balance.
   */
  matchScore: number;
  composition: { notes: Array<{ id: string; name: string; ratio: number }>; baseIntensity: Intensity };
  profile: { categories: string[]; mood: string[]; occasions: string[] };
  reasoning: string;
}

/** Families a first-time customer is offered: one fresh, one floral, one woody, one aromatic. */
const STARTER_CATEGORIES = ['cat_citrus', 'cat_floral', 'cat_woody', 'cat_aromatic'];
/** The reference pyramid a recommendation aims for. */
const BALANCED = { top: 0.25, heart: 0.4, base: 0.35 } as const;
const MAX_RECOMMENDATIONS = 6;
const LEVEL_SHARE: Record<Volatility, number> = {
  top: BALANCED.top,
  middle: BALANCED.heart,
  base: BALANCED.base,
};

/** 400 listing the allowed values when a filter names an unknown category or mood. */
export function checkFilters(catalog: Catalog, filters: RecommendationFilters): void {
  const fields: Array<{ field: string; message: string }> = [];
  if (filters.category && !catalog.category(filters.category)) {
    fields.push({
      field: 'category',
      message: `unknown category; allowed: ${catalog.categories.map((c) => c.id).join(', ')}`,
    });
  }
  if (filters.mood && !catalog.moods.includes(filters.mood.toLowerCase())) {
    fields.push({ field: 'mood', message: `unknown mood; allowed: ${catalog.moods.join(', ')}` });
  }
  if (fields.length > 0) {
    throw new AppError('VALIDATION_ERROR', 'Unknown recommendation filter', {
      fields,
      allowed: { category: catalog.categories.map((c) => c.id), mood: catalog.moods },
    });
  }
}

/**
 * Problems of a customer's preferences against the catalog (categories, moods and notes it knows;
 * occasions are free words), each naming its field under `prefix`.
 */
export function preferenceProblems(
  catalog: Catalog,
  preferences: Partial<CustomerPreferences>,
  prefix = 'preferences',
): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const check = (key: keyof CustomerPreferences, known: (value: string) => boolean, allowed: string) => {
    preferences[key]?.forEach((value, i) => {
      if (!known(value)) problems.push({ field: `${prefix}.${key}.${i}`, message: `unknown ${allowed}` });
    });
  };
  const categories = catalog.categories.map((c) => c.id).join(', ');
  check('categories', (v) => catalog.category(v) !== undefined, `category; allowed: ${categories}`);
  check(
    'moods',
    (v) => catalog.moods.includes(v.toLowerCase()),
    `mood; allowed: ${catalog.moods.join(', ')}`,
  );
  check('dislikedNotes', (v) => catalog.note(v) !== undefined, 'note id; see /api/custom-blends/notes');
  return problems;
}

/**
 * Deterministic recommendations from the customer's own blends, their preferences and the filters.
 * Each filter given replaces the matching preference; a query mood is required of every
 * recommendation, preferred moods only rank the notes.
 */
export function recommend(
  catalog: Catalog,
  history: readonly Blend[],
  filters: RecommendationFilters,
  preferences: CustomerPreferences = NO_PREFERENCES,
): Recommendation[] {
  const mood = filters.mood?.toLowerCase();
  // The moods a note is ranked by: the asked one, else the preferred ones.
  const moods = mood ? [mood] : preferences.moods.map((m) => m.toLowerCase());
  const disliked = new Set(preferences.dislikedNotes);
  const preferred = filters.category ? [] : preferences.categories.filter((id) => catalog.category(id));
  const prefs = new Map<string, number>();
  const occasions = new Map<string, number>();
  const intensities = new Map<Intensity, number>();
  for (const blend of history) {
    for (const n of blend.notes) {
      const note = catalog.note(n.id);
      if (note) prefs.set(note.categoryId, (prefs.get(note.categoryId) ?? 0) + n.ratio / history.length);
    }
    for (const o of blend.occasions) occasions.set(o, (occasions.get(o) ?? 0) + 1);
    intensities.set(blend.baseIntensity, (intensities.get(blend.baseIntensity) ?? 0) + 1);
  }
  const ranked = [...prefs.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const maxPref = ranked[0]?.[1] ?? 1;
  const anchors = filters.category
    ? [filters.category]
    : preferred.length > 0
      ? preferred
      : ranked.length > 0
        ? ranked.slice(0, 3).map(([id]) => id)
        : STARTER_CATEGORIES;
  const baseIntensity = top(intensities) ?? 'medium';
  const occasionList = filters.occasion
    ? [filters.occasion]
    : preferences.occasions.length > 0
      ? [...preferences.occasions]
      : top(occasions)
        ? [top(occasions) as string]
        : ['everyday'];
  const fits = (n: ResolvedNote) => n.note.mood.some((m) => moods.includes(m));

  const out = new Map<string, Recommendation>();
  for (const anchorId of anchors) {
    const anchor = catalog.category(anchorId);
    if (!anchor) continue;
    for (const partnerId of anchor.complementaryCategories.slice(0, 2)) {
      const partner = catalog.category(partnerId);
      if (!partner) continue;
      const notes = compose(catalog, anchor, partner, moods, disliked);
      // Every note of a family may be disliked: nothing left to propose.
      if (notes.length === 0) continue;
      if (mood && !notes.some((n) => n.note.mood.includes(mood))) continue;
      const pyramid = pyramidOf(notes);
      const affinity = filters.category
        ? 1
        : preferred.length > 0
          ? 0.9
          : ranked.length > 0
            ? 0.8 * ((prefs.get(anchor.id) ?? 0) / maxPref) +
              0.2 * Math.min(1, (prefs.get(partner.id) ?? 0) / maxPref)
            : 0.6;
      const moodFit = moods.length > 0 ? notes.filter(fits).reduce((a, n) => a + n.ratio, 0) : 0.6;
      const balance =
        1 -
        (Math.abs(pyramid.top - BALANCED.top) +
          Math.abs(pyramid.heart - BALANCED.heart) +
          Math.abs(pyramid.base - BALANCED.base)) /
          2;
      const matchScore = round(Math.min(1, Math.max(0, 0.45 * affinity + 0.3 * moodFit + 0.25 * balance)));
      const noteMoods = weighted(notes, (n) => n.note.mood).slice(0, 5);
      if (mood && !noteMoods.includes(mood)) noteMoods.push(mood);
      // The name's mood: the asked one, else the first preferred one the notes carry.
      const named = mood ?? moods.find((m) => notes.some((n) => n.note.mood.includes(m)));
      const key = notes.map((n) => `${n.id}:${n.ratio}`).join(',');
      const id = `rec_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
      if (out.has(id)) continue;
      out.set(id, {
        id,
        name: `${anchor.name} & ${partner.name} ${named ? capitalise(named) : 'Harmony'}`,
        description: `A ${anchor.name.toLowerCase()} blend with ${partner.name.toLowerCase()} accents: ${notes.map((n) => n.note.name).join(', ')}.`,
        matchScore,
        composition: {
          notes: notes.map((n) => ({ id: n.id, name: n.note.name, ratio: n.ratio })),
          baseIntensity,
        },
        profile: {
          categories: weighted(notes, (n) => [catalog.categoryName(n.note.categoryId)]),
          mood: noteMoods,
          occasions: occasionList,
        },
        reasoning: reasoning({
          anchor,
          partner,
          share: prefs.get(anchor.id),
          filters,
          mood: named,
          occasions: filters.occasion ? [] : preferences.occasions,
          pyramid,
          preferred: preferred.length > 0,
          starter: ranked.length === 0,
        }),
      });
    }
  }
  return [...out.values()]
    .sort((a, b) => b.matchScore - a.matchScore || a.id.localeCompare(b.id))
    .slice(0, MAX_RECOMMENDATIONS);
}

/**
 * One note per pyramid stage from the anchor family (else the partner, else anywhere), plus a
 * complement; never a disliked note (a stage no liked note fills is left out).
 */
function compose(
  catalog: Catalog,
  anchor: Category,
  partner: Category,
  moods: readonly string[],
  disliked: ReadonlySet<string>,
): ResolvedNote[] {
  const chosen: Note[] = [];
  const open = (n: Note) => !chosen.includes(n) && !disliked.has(n.id);
  const rank = (n: Note) =>
    (n.mood.some((m) => moods.includes(m)) ? 0 : 4) +
    (anchor.popularNotes.includes(n.name) || partner.popularNotes.includes(n.name) ? 0 : 2);
  const pick = (volatility: Volatility, families: readonly string[]) =>
    catalog.notes
      .filter((n) => n.volatility === volatility && families.includes(n.categoryId) && open(n))
      .sort(
        (a, b) =>
          families.indexOf(a.categoryId) - families.indexOf(b.categoryId) ||
          rank(a) - rank(b) ||
          a.id.localeCompare(b.id),
      )[0] ??
    catalog.notes
      .filter((n) => n.volatility === volatility && open(n))
      .sort((a, b) => rank(a) - rank(b) || a.id.localeCompare(b.id))[0];
  for (const volatility of ['top', 'middle', 'base'] as const) {
    const note = pick(volatility, [anchor.id, partner.id]);
    if (note) chosen.push(note);
  }
  const main = chosen[0];
  const extra = main?.complementaryNotes.map((id) => catalog.note(id)).find((n) => n && open(n));
  if (extra) chosen.push(extra);
  return withRatios(chosen);
}

/** Stage shares split across the stage's notes in hundredths; the last note absorbs rounding, so the sum is 1. */
function withRatios(notes: readonly Note[]): ResolvedNote[] {
  const present = new Set(notes.map((n) => n.volatility));
  const total = [...present].reduce((a, v) => a + LEVEL_SHARE[v], 0);
  const raw: NoteRatio[] = [];
  for (const volatility of ['top', 'middle', 'base'] as const) {
    const group = notes.filter((n) => n.volatility === volatility);
    const share = LEVEL_SHARE[volatility] / total;
    group.forEach((n, i) => {
      const part = group.length === 1 ? share : i === 0 ? share * 0.6 : (share * 0.4) / (group.length - 1);
      raw.push({ id: n.id, ratio: Math.round(part * 100) / 100 });
    });
  }
  const sum = raw.reduce((a, n) => a + n.ratio, 0);
  const last = raw[raw.length - 1];
  if (last) last.ratio = Math.round((last.ratio + 1 - sum) * 100) / 100;
  return raw.map((r) => ({ ...r, note: notes.find((n) => n.id === r.id) as Note }));
}

function reasoning(input: {
  anchor: Category;
  partner: Category;
  share: number | undefined;
  filters: RecommendationFilters;
  mood: string | undefined;
  /** Preferred occasions used (no occasion asked). */
  occasions: readonly string[];
  pyramid: { top: number; heart: number; base: number };
  preferred: boolean;
  starter: boolean;
}): string {
  const { anchor, partner, pyramid } = input;
  const why = input.filters.category
    ? `You asked for ${anchor.name}`
    : input.preferred
      ? `Your profile says you like ${anchor.name}`
      : input.starter
        ? `A well-balanced starter built on ${anchor.name}`
        : `${anchor.name} makes up ${Math.round((input.share ?? 0) * 100)}% of the notes in your blends`;
  const split = `${Math.round(pyramid.top * 100)}/${Math.round(pyramid.heart * 100)}/${Math.round(pyramid.base * 100)}`;
  const moodPart = input.mood ? `, with notes chosen for a ${input.mood} mood` : '';
  const occasion = input.filters.occasion ?? (input.occasions.length > 0 ? input.occasions.join(', ') : null);
  const occasionPart = occasion ? ` and suited to ${occasion}` : '';
  return `${why}; ${partner.name} is one of its classic complements, and a ${split} top/heart/base split keeps it balanced${moodPart}${occasionPart}.`;
}

function top<K>(counts: Map<K, number>): K | undefined {
  return [...counts.entries()].sort(
    (a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])),
  )[0]?.[0];
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
