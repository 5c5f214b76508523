/**
 * The keyword index's words per language: lower-cased, accents off, then stemmed with the language's
 * Snowball-family stemmer (@orama/stemmers), so "shipping", "shipped" and "ships" are one term. The
 * same function makes a chunk's stored terms (at processing, in a CPU worker) and a query's, so SQLite's
 * FTS5 and PostgreSQL's tsvector — both over the stored terms — find the same chunks. `none` keeps
 * words as written (what chunks processed before stemming hold: a document remembers its language).
 */
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';

const STEMMERS: Record<string, (word: string) => string> = {
  danish,
  dutch,
  english,
  finnish,
  french,
  german,
  italian,
  norwegian,
  portuguese,
  russian,
  spanish,
  swedish,
};

/** Languages a topic may be indexed in; `none` indexes words as written. */
export const LANGUAGES: readonly string[] = ['none', ...Object.keys(STEMMERS)];
export const DEFAULT_LANGUAGE = 'english';

/** Words longer than this are kept as they are (a stemmer's cost grows with the word; such a "word" is an id). */
const MAX_STEMMED_LENGTH = 40;

/** The stemmer of a language (the identity for `none` or a language this build does not know). */
export function stemmerOf(language: string): (word: string) => string {
  const stem = STEMMERS[language];
  if (!stem) return (word) => word;
  const cache = new Map<string, string>();
  return (word) => {
    if (word.length > MAX_STEMMED_LENGTH || /\p{N}/u.test(word)) return word;
    let out = cache.get(word);
    if (out === undefined) {
      out = stem(word);
      if (cache.size < 50_000) cache.set(word, out);
    }
    return out;
  };
}

/**
 * Each topic's language: `KNOWLEDGE_TOPIC_LANGUAGES` (`topic=language,…`) over `KNOWLEDGE_LANGUAGE`.
 * An unknown language stops the server at boot with its name (a typo would silently index unstemmed).
 */
export function topicLanguages(defaultLanguage: string, perTopic: string): (topic: string) => string {
  const check = (language: string, where: string): string => {
    if (!LANGUAGES.includes(language))
      throw new Error(`${where}: unknown language '${language}' (one of ${LANGUAGES.join(', ')})`);
    return language;
  };
  const fallback = check(defaultLanguage.trim().toLowerCase(), 'KNOWLEDGE_LANGUAGE');
  const map = new Map<string, string>();
  for (const entry of perTopic.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.lastIndexOf('=');
    if (at <= 0) throw new Error(`KNOWLEDGE_TOPIC_LANGUAGES: '${entry}' is not topic=language`);
    map.set(
      entry.slice(0, at).trim(),
      check(
        entry
          .slice(at + 1)
          .trim()
          .toLowerCase(),
        'KNOWLEDGE_TOPIC_LANGUAGES',
      ),
    );
  }
  return (topic) => map.get(topic) ?? fallback;
}
