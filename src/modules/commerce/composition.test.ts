import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.js';
import { analyseBlend } from './analysis.js';
import { catalogFromData } from './catalog-store.js';
import { COMPOSITION_LIMITS, pyramidOf, validateComposition } from './composition.js';
import { INTENSITIES, type NoteRatio } from './domain.js';

const catalog = catalogFromData();
const ids = catalog.notes.map((n) => n.id);
const exists = (id: string) => catalog.note(id) !== undefined;

/** The rules, stated independently of the implementation. */
function oracle(notes: NoteRatio[]): 'ok' | 'VALIDATION_ERROR' | 'NOTE_NOT_FOUND' | 'INVALID_COMPOSITION' {
  if (notes.length < 1 || notes.length > 15) return 'VALIDATION_ERROR';
  if (new Set(notes.map((n) => n.id)).size !== notes.length) return 'VALIDATION_ERROR';
  const scale = notes.some((n) => n.ratio > 1) ? 100 : 1;
  if (notes.some((n) => !(n.ratio / scale >= COMPOSITION_LIMITS.minRatio && n.ratio <= 100)))
    return 'VALIDATION_ERROR';
  if (notes.some((n) => !exists(n.id))) return 'NOTE_NOT_FOUND';
  const sum = notes.reduce((a, n) => a + n.ratio, 0);
  const percentages = notes.some((n) => n.ratio > 1);
  return Math.abs(sum / (percentages ? 100 : 1) - 1) <= COMPOSITION_LIMITS.tolerance
    ? 'ok'
    : 'INVALID_COMPOSITION';
}

function outcome(notes: NoteRatio[]): string {
  try {
    const out = validateComposition(notes, exists);
    const sum = out.reduce((a, n) => a + n.ratio, 0);
    expect(Math.abs(sum - 1)).toBeLessThanOrEqual(COMPOSITION_LIMITS.tolerance * 1.0001);
    expect(out.every((n) => n.ratio > 0 && n.ratio <= 1)).toBe(true);
    return 'ok';
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

/** Ratios that sum to exactly `total`: positive integer weights scaled. */
const exactRatios = (count: number, total: number) =>
  fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: count, maxLength: count }).map((w) => {
    const sum = w.reduce((a, b) => a + b, 0);
    const ratios = w.map((x) => (x / sum) * total);
    return ratios;
  });

const noteIds = (count: number) => fc.shuffledSubarray(ids, { minLength: count, maxLength: count });

const validComposition = fc
  .integer({ min: 1, max: 15 })
  .chain((count) => fc.tuple(noteIds(count), exactRatios(count, 1), fc.boolean()))
  .map(([chosen, ratios, asPercent]) =>
    chosen.map((id, i) => ({ id, ratio: (ratios[i] ?? 0) * (asPercent && chosen.length > 1 ? 100 : 1) })),
  );

const anyComposition = fc.array(
  fc.record({
    id: fc.oneof(fc.constantFrom(...ids), fc.constantFrom('note_nope', 'rose')),
    ratio: fc.oneof(
      fc.double({ min: -1, max: 120, noNaN: true }),
      fc.constantFrom(0, 5e-324, 1e-7, 0.25, 0.5, 1, 25, 50, 100, Number.POSITIVE_INFINITY),
    ),
  }),
  { maxLength: 17 },
);

describe('composition validation', () => {
  it('accepts every valid composition (fractions or percentages)', () => {
    fc.assert(
      fc.property(validComposition, (notes) => {
        expect(outcome(notes)).toBe(oracle(notes));
      }),
      { numRuns: 300 },
    );
    fc.assert(fc.property(validComposition, (notes) => outcome(notes) === 'ok'));
  });

  it('accepts exactly the valid inputs', () => {
    fc.assert(
      fc.property(anyComposition, (notes) => {
        expect(outcome(notes)).toBe(oracle(notes));
      }),
      { numRuns: 1000 },
    );
  });

  it('rejects sums off by more than the tolerance with the sum in details', () => {
    fc.assert(
      fc.property(noteIds(3), fc.double({ min: 1e-5, max: 0.5, noNaN: true }), (chosen, off) => {
        const notes = chosen.map((id, i) => ({ id, ratio: i === 0 ? 0.5 + off : 0.25 }));
        try {
          validateComposition(notes, exists);
          return false;
        } catch (error) {
          return (
            error instanceof AppError &&
            error.code === 'INVALID_COMPOSITION' &&
            Math.abs((error.details.sum as number) - (1 + off)) < 1e-9
          );
        }
      }),
    );
  });
});

describe('pyramid and analysis', () => {
  it('shares of top, heart and base always sum to 1 and lie in [0, 1]', () => {
    fc.assert(
      fc.property(validComposition, fc.constantFrom(...INTENSITIES), (raw, intensity) => {
        const notes = validateComposition(raw, exists).map((n) => ({ ...n, note: catalog.note(n.id)! }));
        const p = pyramidOf(notes);
        expect(Math.abs(p.top + p.heart + p.base - 1)).toBeLessThan(1e-9);
        for (const share of [p.top, p.heart, p.base]) expect(share >= 0 && share <= 1).toBe(true);
        const analysis = analyseBlend(notes, intensity, catalog);
        expect(analysis.recommendations.length).toBeGreaterThan(0);
        expect(analysis.longevityScore >= 0 && analysis.longevityScore <= 1).toBe(true);
        expect(analysis.sillageScore >= 0 && analysis.sillageScore <= 1).toBe(true);
        const advised = analysis.recommendations.some((r) => r.includes('3 to 7 notes'));
        expect(advised).toBe(notes.length < 3 || notes.length > 7);
      }),
      { numRuns: 300 },
    );
  });
});
