import { AppError } from '../../core/errors.js';
import type { NoteRatio, Pyramid, ResolvedNote } from './domain.js';

export const COMPOSITION_LIMITS = {
  minNotes: 1,
  maxNotes: 15,
  /** How far the ratios may sum from 1.0 (fractions) or 100 (percentages, scaled). */
  tolerance: 1e-6,
  /** The smallest share a note may have (as a fraction); anything less is not a note of the blend. */
  minRatio: 1e-6,
} as const;

/**
 * Validates the notes of a composition and returns them as fractions.
 * - 1 to 15 notes, no id twice, every ratio a positive number (400 VALIDATION_ERROR);
 * - every id in the catalog (404 NOTE_NOT_FOUND naming the first unknown one);
 * - ratios are fractions in (0, 1] summing to 1 within 1e-6, or — when any ratio is above 1 —
 *   percentages in (0, 100] summing to 100, stored divided by 100 (else 422 INVALID_COMPOSITION).
 */
export function validateComposition(
  notes: readonly NoteRatio[],
  exists: (noteId: string) => boolean,
): NoteRatio[] {
  const { minNotes, maxNotes, tolerance, minRatio } = COMPOSITION_LIMITS;
  if (notes.length < minNotes || notes.length > maxNotes) {
    throw new AppError('VALIDATION_ERROR', `A blend has ${minNotes} to ${maxNotes} notes`, {
      fields: [{ field: 'composition.notes', message: `must hold ${minNotes} to ${maxNotes} notes` }],
    });
  }
  const percentages = notes.some((n) => n.ratio > 1);
  const scale = percentages ? 100 : 1;
  const problems: Array<{ field: string; message: string }> = [];
  const seen = new Set<string>();
  notes.forEach((n, i) => {
    if (seen.has(n.id))
      problems.push({ field: `composition.notes.${i}.id`, message: `note '${n.id}' appears twice` });
    seen.add(n.id);
    if (!Number.isFinite(n.ratio) || n.ratio / scale < minRatio || n.ratio > 100) {
      problems.push({
        field: `composition.notes.${i}.ratio`,
        message: 'must be at least 0.000001 of the blend and at most 1 (or 100 as a percentage)',
      });
    }
  });
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid blend composition', { fields: problems });

  const unknown = notes.filter((n) => !exists(n.id)).map((n) => n.id);
  if (unknown.length > 0) {
    throw new AppError('NOTE_NOT_FOUND', `Scent note '${unknown[0]}' was not found`, {
      id: unknown[0],
      ids: unknown,
    });
  }

  const sum = notes.reduce((acc, n) => acc + n.ratio, 0);
  if (Math.abs(sum / scale - 1) > tolerance) {
    throw new AppError(
      'INVALID_COMPOSITION',
      percentages
        ? `Note percentages must sum to 100; they sum to ${round(sum, 6)}`
        : `Note ratios must sum to 1.0; they sum to ${round(sum, 6)}`,
      { sum, expected: scale, unit: percentages ? 'percent' : 'fraction' },
    );
  }
  return notes.map((n) => ({ id: n.id, ratio: percentages ? n.ratio / 100 : n.ratio }));
}

/** Top, heart (middle) and base shares of a composition; they sum to 1. */
export function pyramidOf(notes: readonly ResolvedNote[]): Pyramid {
  let top = 0;
  let heart = 0;
  let base = 0;
  for (const n of notes) {
    if (n.note.volatility === 'top') top += n.ratio;
    else if (n.note.volatility === 'middle') heart += n.ratio;
    else base += n.ratio;
  }
  const total = top + heart + base;
  if (total <= 0) return { top: 0, heart: 0, base: 0 };
  return { top: top / total, heart: heart / total, base: base / total };
}

/** Items weighted by the ratio of the notes that carry them, heaviest first (ties by name). */
export function weighted(
  notes: readonly ResolvedNote[],
  keys: (n: ResolvedNote) => readonly string[],
): string[] {
  const weights = new Map<string, number>();
  for (const n of notes) for (const key of keys(n)) weights.set(key, (weights.get(key) ?? 0) + n.ratio);
  return [...weights.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([key]) => key);
}

export function weights(
  notes: readonly ResolvedNote[],
  key: (n: ResolvedNote) => string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of notes) out.set(key(n), (out.get(key(n)) ?? 0) + n.ratio);
  return out;
}

export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

export const percent = (share: number): string => `${Math.round(share * 100)}%`;
