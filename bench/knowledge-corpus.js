/**
 * Synthetic English-like text for the knowledge-base bench: a fixed vocabulary of ~5,000 words (common
 * English function words first, then made-up words of English-like syllables) drawn with Zipf's law, so
 * term frequencies spread as in real prose: a few words in most chunks, most words in a few. Everything
 * comes from a seeded generator, so every run ingests and queries the same text.
 */

/** mulberry32: small, fast and good enough for test data; returns floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const FUNCTION_WORDS = (
  'the of and to a in is it that for on was with as he be by at this have from or one had not but ' +
  'what all were when we there can an your which their said if do will each about how up out them then ' +
  'she many some so these would other into has more her two like him see time could no make than first ' +
  'been its who now people my made over did down only way find use may water long little very after ' +
  'words called just where most know'
).split(' ');

const ONSETS =
  'b c d f g h j k l m n p r s t v w z bl br ch cl cr dr fl fr gl gr pl pr sh sl st str th tr'.split(' ');
const VOWELS = 'a e i o u ai ea ee oa ou io'.split(' ');
const CODAS = ' n r s t l m nd nt st rk ng'.split(' ');

export const VOCABULARY_SIZE = 5_000;

/** The vocabulary, most frequent first: function words, then distinct 1–3 syllable made-up words. */
export function vocabulary(size = VOCABULARY_SIZE) {
  const random = prng(1_013);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const seen = new Set(FUNCTION_WORDS);
  const words = [...FUNCTION_WORDS];
  while (words.length < size) {
    const syllables = 1 + Math.floor(random() * 3);
    let word = '';
    for (let s = 0; s < syllables; s++)
      word += pick(ONSETS) + pick(VOWELS) + (s === syllables - 1 ? pick(CODAS) : '');
    if (word.length < 3 || seen.has(word)) continue;
    seen.add(word);
    words.push(word);
  }
  return words;
}

/** Draws vocabulary ranks with probability ∝ 1/rank (binary search over the cumulative weights). */
function zipfSampler(size, random) {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let r = 0; r < size; r++) {
    total += 1 / (r + 1);
    cumulative[r] = total;
  }
  return () => {
    const target = random() * total;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/**
 * Document `n` of the corpus: paragraphs of 3–7 sentences of 6–20 words until `chars` characters,
 * each document from its own seed, so any document can be made without the ones before it.
 */
export function corpusDocument(words, n, chars) {
  const random = prng(0x9e37_79b9 ^ (n * 7_919));
  const rank = zipfSampler(words.length, random);
  const paragraphs = [];
  let length = 0;
  while (length < chars) {
    const sentences = [];
    const count = 3 + Math.floor(random() * 5);
    for (let s = 0; s < count; s++) {
      const len = 6 + Math.floor(random() * 15);
      const parts = [];
      for (let w = 0; w < len; w++) parts.push(words[rank()]);
      const sentence = parts.join(' ');
      sentences.push(`${sentence[0].toUpperCase()}${sentence.slice(1)}.`);
    }
    const paragraph = sentences.join(' ');
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  return paragraphs.join('\n\n');
}

/** A query of 3–6 words drawn uniformly from the vocabulary (mostly rarer words, as questions are). */
export function queryMaker(words, seed) {
  const random = prng(seed);
  return () => {
    const count = 3 + Math.floor(random() * 4);
    const parts = [];
    for (let i = 0; i < count; i++) parts.push(words[Math.floor(random() * words.length)]);
    return parts.join(' ');
  };
}
