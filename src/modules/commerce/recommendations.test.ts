import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogFromData } from './catalog-store.js';
import { validateComposition } from './composition.js';
import { type Blend, INTENSITIES } from './domain.js';
import { checkFilters, preferenceProblems, recommend } from './recommendations.js';

const catalog = catalogFromData();
const ids = catalog.notes.map((n) => n.id);

const history = fc
  .array(
    fc.record({
      notes: fc.shuffledSubarray(ids, { minLength: 1, maxLength: 6 }),
      baseIntensity: fc.constantFrom(...INTENSITIES),
      occasions: fc.array(fc.constantFrom('office', 'evening', 'summer'), { maxLength: 2 }),
    }),
    { maxLength: 4 },
  )
  .map((list) =>
    list.map(
      (b, i): Blend => ({
        id: `blend_${i}`,
        accountId: 'acc',
        owner: 'c',
        name: `b${i}`,
        description: '',
        isPublic: false,
        notes: b.notes.map((id) => ({ id, ratio: 1 / b.notes.length })),
        baseIntensity: b.baseIntensity,
        occasions: b.occasions,
        createdAt: '',
        updatedAt: '',
      }),
    ),
  );

const filters = fc.record({
  category: fc.option(fc.constantFrom(...catalog.categories.map((c) => c.id)), { nil: undefined }),
  mood: fc.option(fc.constantFrom(...catalog.moods), { nil: undefined }),
  occasion: fc.option(fc.constantFrom('date night', 'office'), { nil: undefined }),
});

describe('recommendations', () => {
  it('every recommendation is a valid blend that honours the filters, deterministically', () => {
    fc.assert(
      fc.property(history, filters, (blends, f) => {
        checkFilters(catalog, f);
        const recs = recommend(catalog, blends, f);
        expect(recs).toEqual(recommend(catalog, blends, f));
        for (const r of recs) {
          const valid = validateComposition(r.composition.notes, (id) => catalog.note(id) !== undefined);
          expect(valid).toHaveLength(r.composition.notes.length);
          expect(r.matchScore >= 0 && r.matchScore <= 1).toBe(true);
          expect(r.reasoning).toMatch(/\.$/);
          if (f.category) expect(r.profile.categories).toContain(catalog.categoryName(f.category));
          if (f.mood) expect(r.profile.mood).toContain(f.mood);
          if (f.occasion) expect(r.profile.occasions).toEqual([f.occasion]);
        }
        if (!f.mood) expect(recs.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects unknown filters listing the allowed values', () => {
    const details = (f: { category?: string; mood?: string }) => {
      try {
        checkFilters(catalog, f);
        return '';
      } catch (error) {
        return JSON.stringify((error as { details: unknown }).details);
      }
    };
    expect(details({ category: 'cat_x' })).toContain('cat_gourmand');
    expect(details({ mood: 'grumpy' })).toContain('cozy');
    expect(details({ category: 'cat_woody', mood: 'cozy' })).toBe('');
  });

  const preferences = fc.record({
    categories: fc.shuffledSubarray(
      catalog.categories.map((c) => c.id),
      { maxLength: 3 },
    ),
    moods: fc.shuffledSubarray([...catalog.moods], { maxLength: 3 }),
    dislikedNotes: fc.shuffledSubarray(ids, { maxLength: 40 }),
    occasions: fc.shuffledSubarray(['office', 'evening', 'date night'], { maxLength: 2 }),
  });

  it('preferences: never a disliked note; a filter wins over its preference; still valid and deterministic', () => {
    fc.assert(
      fc.property(history, filters, preferences, (blends, f, prefs) => {
        const recs = recommend(catalog, blends, f, prefs);
        expect(recs).toEqual(recommend(catalog, blends, f, prefs));
        for (const r of recs) {
          for (const n of r.composition.notes) expect(prefs.dislikedNotes).not.toContain(n.id);
          const valid = validateComposition(r.composition.notes, (id) => catalog.note(id) !== undefined);
          expect(valid).toHaveLength(r.composition.notes.length);
          // The asked family shows unless every one of its notes is disliked (dislikes win).
          const liked = catalog.notes.some(
            (n) => n.categoryId === f.category && !prefs.dislikedNotes.includes(n.id),
          );
          if (f.category && liked) expect(r.profile.categories).toContain(catalog.categoryName(f.category));
          if (f.mood) expect(r.profile.mood).toContain(f.mood);
          const occasions = f.occasion ? [f.occasion] : prefs.occasions.length > 0 ? prefs.occasions : null;
          if (occasions) expect(r.profile.occasions).toEqual(occasions);
        }
        // Preferred moods rank notes but exclude nothing: with notes left to like, there is an answer.
        if (!f.mood && prefs.dislikedNotes.length === 0) expect(recs.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('preferred categories anchor the recommendations when no category is asked', () => {
    const prefs = {
      categories: ['cat_gourmand'],
      moods: ['cozy'],
      dislikedNotes: [],
      occasions: ['evening'],
    };
    const recs = recommend(catalog, [], {}, prefs);
    expect(recs.length).toBeGreaterThan(0);
    for (const r of recs) {
      expect(r.name).toMatch(/^Gourmand & .* Cozy$/);
      expect(r.reasoning).toContain('Your profile says you like Gourmand');
      expect(r.reasoning).toContain('suited to evening');
      expect(r.profile.occasions).toEqual(['evening']);
    }
    // Without preferences the same customer gets the starter families.
    expect(recommend(catalog, [], {}).some((r) => r.name.startsWith('Citrus'))).toBe(true);
    // An asked category wins over the preferred one.
    for (const r of recommend(catalog, [], { category: 'cat_citrus' }, prefs)) {
      expect(r.name).toMatch(/^Citrus & /);
    }
  });

  it('a disliked note is left out even where it would be chosen first', () => {
    const woody = recommend(catalog, [], { category: 'cat_woody' });
    const chosen = new Set(woody.flatMap((r) => r.composition.notes.map((n) => n.id)));
    expect(chosen.size).toBeGreaterThan(0);
    const dislikedNotes = [...chosen];
    const prefs = { categories: [], moods: [], dislikedNotes, occasions: [] };
    const recs = recommend(catalog, [], { category: 'cat_woody' }, prefs);
    expect(recs.length).toBeGreaterThan(0);
    for (const r of recs) for (const n of r.composition.notes) expect(dislikedNotes).not.toContain(n.id);
  });

  it('checks preferences against the catalog, naming each unknown value', () => {
    expect(
      preferenceProblems(catalog, {
        categories: ['cat_woody'],
        moods: ['Cozy'],
        dislikedNotes: ['note_oud'],
      }),
    ).toEqual([]);
    const problems = preferenceProblems(catalog, {
      categories: ['cat_woody', 'cat_x'],
      moods: ['grumpy'],
      dislikedNotes: ['note_x'],
      occasions: ['anything goes'],
    });
    expect(problems.map((p) => p.field)).toEqual([
      'preferences.categories.1',
      'preferences.moods.0',
      'preferences.dislikedNotes.0',
    ]);
    expect(problems[0]?.message).toContain('cat_gourmand');
  });
});
