/**
 * `builtin/hashed-ngrams`: a deterministic, weight-free lexical embedder (the feature-hashing trick).
 *
 * Text → NFKC, lowercase → word tokens (runs of Unicode letters, marks and digits). Features: each word,
 * each pair of neighbouring words, and the character 3-grams of each word with boundary marks
 * (`^ca`, `cat`, `at$`), so inflections and typos still share most features. Each feature is hashed
 * (FNV-1a 32-bit + murmur3's finaliser) to one of 384 dimensions, with a sign from another hash bit so
 * collisions cancel on average instead of piling up. Weight: sublinear tf (1 + ln tf) × a per-kind weight
 * (words above bigrams above character grams) × a term weight: function words ("the", "of", "what"),
 * which occur in nearly every text and so tell nothing apart, weigh `STOP_WEIGHT` and give no character
 * grams, and a bigram weighs as its weaker word — a static stand-in for IDF that needs no corpus, so a
 * vector never changes once stored. The vector is L2-normalised; a text with no word gives the zero
 * vector (cosine 0 with everything), never NaN.
 *
 * Only the first 100,000 characters of a text are read, which bounds the time of any one call.
 */

export const HASHED_NGRAMS_DIMENSIONS = 384;
/** Characters of a text that are read; the rest is ignored. */
export const HASHED_NGRAMS_MAX_CHARS = 100_000;

const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.6;
const TRIGRAM_WEIGHT = 0.3;
/** Weight of a function word relative to any other word (its character grams are left out). */
const STOP_WEIGHT = 0.1;

/** English function words: in nearly every text, so they say nothing about what a text is about. */
const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own please same she ' +
    'should so some such tell than that the their theirs them themselves then there these they this those ' +
    'through to too under until up us very was we were what when where which while who whom whose why will ' +
    'with would you your yours yourself yourselves s t d ll re ve m'
  ).split(' '),
);
/** Distinct seeds keep a word, a bigram and a character gram from sharing a hash by construction. */
const WORD_SEED = 0x811c9dc5;
const BIGRAM_SEED = 0x6a09e667;
const TRIGRAM_SEED = 0x3c6ef372;
/** Boundary mark of character grams (a control character no word token contains). */
const BOUNDARY = 0x02;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** Word tokens of a text as the embedder sees them (NFKC, lowercase); shared with the extractive scorer. */
export function wordTokens(text: string): string[] {
  return text.slice(0, HASHED_NGRAMS_MAX_CHARS).normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

function fnv1a(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** murmur3's 32-bit finaliser: FNV's low bits are weak, and the dimension and sign come from them. */
function mix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Feature counts in an open-addressing table keyed by the 32-bit feature hash. Reused across calls
 * (generation stamps mark live slots, so nothing is cleared); the embedder never awaits, so one table
 * per thread is safe.
 */
class FeatureTable {
  private capacity = 0;
  private keys = new Uint32Array(0);
  private stamps = new Uint32Array(0);
  private generation = 0;
  counts = new Float64Array(0);
  weights = new Float64Array(0);
  /** Live slots, in insertion order, and their hashes. */
  slots = new Uint32Array(0);
  hashes = new Uint32Array(0);
  size = 0;

  reset(maxFeatures: number): void {
    let wanted = 1024;
    while (wanted < maxFeatures * 2) wanted *= 2;
    if (wanted > this.capacity) {
      this.capacity = wanted;
      this.keys = new Uint32Array(wanted);
      this.stamps = new Uint32Array(wanted);
      this.counts = new Float64Array(wanted);
      this.weights = new Float64Array(wanted);
      this.slots = new Uint32Array(wanted);
      this.hashes = new Uint32Array(wanted);
      this.generation = 0;
    }
    this.generation = (this.generation + 1) >>> 0;
    if (this.generation === 0) {
      this.stamps.fill(0);
      this.generation = 1;
    }
    this.size = 0;
  }

  add(hash: number, weight: number): void {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    for (;;) {
      if (this.stamps[slot] !== this.generation) {
        this.stamps[slot] = this.generation;
        this.keys[slot] = hash;
        this.counts[slot] = 1;
        this.weights[slot] = weight;
        this.slots[this.size] = slot;
        this.hashes[this.size] = hash;
        this.size++;
        return;
      }
      if (this.keys[slot] === hash) {
        this.counts[slot]! += 1;
        return;
      }
      slot = (slot + 1) & mask;
    }
  }
}

const table = new FeatureTable();

/** The embedding of `text`: 384 floats, L2 norm 1 (or all zeros for a text without words). */
export function embedHashedNgrams(text: string): Float32Array {
  const words = wordTokens(text);
  let chars = 0;
  for (const word of words) chars += word.length;
  // Each word gives one unigram, one bigram and as many 3-grams as it has characters (with the marks).
  table.reset(chars + 2 * words.length + 1);

  let previous = 0;
  let previousWeight = 1;
  for (let w = 0; w < words.length; w++) {
    const word = words[w]!;
    const weight = FUNCTION_WORDS.has(word) ? STOP_WEIGHT : 1;
    const wordHash = fnv1a(word, WORD_SEED);
    table.add(mix(wordHash), WORD_WEIGHT * weight);
    if (w > 0)
      table.add(
        mix(Math.imul(previous ^ BIGRAM_SEED, 0x01000193) ^ mix(wordHash)),
        BIGRAM_WEIGHT * Math.min(weight, previousWeight),
      );
    previous = wordHash;
    previousWeight = weight;
    if (weight === 1) addCharGrams(word);
  }

  const vector = new Float64Array(HASHED_NGRAMS_DIMENSIONS);
  for (let i = 0; i < table.size; i++) {
    const hash = table.hashes[i]!;
    const slot = table.slots[i]!;
    const value = table.weights[slot]! * (1 + Math.log(table.counts[slot]!));
    const dimension = (hash & 0x7fffffff) % HASHED_NGRAMS_DIMENSIONS;
    vector[dimension] = vector[dimension]! + (hash & 0x80000000 ? -value : value);
  }
  return normalise(vector);
}

/** Character 3-grams of `^word$`, hashed straight from char codes (no substring allocations). */
function addCharGrams(word: string): void {
  const length = word.length;
  for (let i = -1; i < length - 1; i++) {
    let h = TRIGRAM_SEED;
    for (let k = i; k < i + 3; k++) {
      const code = k < 0 || k >= length ? BOUNDARY : word.charCodeAt(k);
      h ^= code;
      h = Math.imul(h, 0x01000193);
    }
    table.add(mix(h), TRIGRAM_WEIGHT);
  }
}

function normalise(vector: Float64Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const out = new Float32Array(vector.length);
  if (sum === 0) return out;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale;
  return out;
}

/** Cosine of two vectors of equal length (0 when either is the zero vector). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
