import { swatchSvg } from './assets.js';
import type { Catalog } from './catalog.js';

const PRODUCT_COLOR = '#6B5B4E';
const MOOD_COLORS = ['#E58FB1', '#5BB8D6', '#D4892A', '#6BA368', '#8E7CC3', '#C0392B', '#A0522D'];

/** The SVG swatch of an asset path of the data files, or null when it names nothing. */
export function swatchFor(catalog: Catalog, kind: string, name: string): string | null {
  switch (kind) {
    case 'categories': {
      const category = catalog.category(`cat_${name}`);
      return category ? swatchSvg(category.name, category.color) : null;
    }
    case 'notes': {
      const note = catalog.note(`note_${name}`);
      return note ? swatchSvg(note.name, catalog.category(note.categoryId)?.color ?? PRODUCT_COLOR) : null;
    }
    case 'products':
      return swatchSvg(name.replace(/-/g, ' '), PRODUCT_COLOR);
    case 'moods': {
      if (!catalog.moods.includes(name)) return null;
      const index = [...name].reduce((a, c) => a + c.charCodeAt(0), 0) % MOOD_COLORS.length;
      return swatchSvg(name, MOOD_COLORS[index] ?? PRODUCT_COLOR);
    }
    default:
      return null;
  }
}
