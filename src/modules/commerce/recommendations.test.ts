import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogFromData } from './catalog-store.js';
import { validateComposition } from './composition.js';
import { type Blend, INTENSITIES } from './domain.js';
import { checkFilters, recommend } from './recommendations.js';

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
});
