import type { Category, Note } from './domain.js';

/** The scent catalog held in memory: it is static reference data, loaded from its tables at boot. */
export class Catalog {
  readonly categories: readonly Category[];
  readonly notes: readonly Note[];
  private readonly notesById: Map<string, Note>;
  private readonly categoriesById: Map<string, Category>;
  /** Every mood word used by a note, sorted. */
  readonly moods: readonly string[];

  constructor(categories: Category[], notes: Note[]) {
    this.categories = categories;
    this.notes = notes;
    this.notesById = new Map(notes.map((n) => [n.id, n]));
    this.categoriesById = new Map(categories.map((c) => [c.id, c]));
    this.moods = [...new Set(notes.flatMap((n) => n.mood))].sort();
  }

  note(id: string): Note | undefined {
    return this.notesById.get(id);
  }

  category(id: string): Category | undefined {
    return this.categoriesById.get(id);
  }

  categoryName(id: string): string {
    return this.categoriesById.get(id)?.name ?? id;
  }

  /** Notes of a category (by id) whose name or description contains the term, case-insensitively. */
  searchNotes(filter: { category?: string; searchTerm?: string }): Note[] {
    const term = filter.searchTerm?.trim().toLowerCase();
    return this.notes.filter(
      (n) =>
        (!filter.category || n.categoryId === filter.category) &&
        (!term || n.name.toLowerCase().includes(term) || n.description.toLowerCase().includes(term)),
    );
  }
}
