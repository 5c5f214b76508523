import { randomBytes } from 'node:crypto';
import type { Json } from '../../../engine/types.js';

/** A seeded pseudo-random source (mulberry32 over a string hash): the same seed, the same data. */
export function randomSource(seed: string): () => number {
  let h = 1779033703 ^ seed.length;
  const text = seed === '' ? randomBytes(8).toString('hex') : seed;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  let state = h >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Frances', 'Tim'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Berners-Lee',
];
const STREETS = ['Main St', 'Oak Ave', 'Pine Rd', 'Maple Dr', 'Cedar Ln', 'Elm St'];
const CITIES = ['Springfield', 'Riverside', 'Fairview', 'Madison', 'Georgetown', 'Salem'];
const DOMAINS = ['example.com', 'example.org', 'example.net'];

type Rand = () => number;
const int = (r: Rand, min: number, max: number) => min + Math.floor(r() * (max - min + 1));
const pickOne = <T>(r: Rand, list: readonly T[]): T => list[int(r, 0, list.length - 1)] as T;
const hex = (r: Rand, n: number) => Array.from({ length: n }, () => int(r, 0, 15).toString(16)).join('');

function uuid(r: Rand): string {
  const h = hex(r, 32).split('');
  h[12] = '4';
  h[16] = '89ab'[int(r, 0, 3)] as string;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

function email(r: Rand): string {
  return `${pickOne(r, FIRST).toLowerCase()}.${pickOne(r, LAST).toLowerCase()}${int(r, 1, 99)}@${pickOne(r, DOMAINS)}`;
}

/** Luhn check digit, so generated card numbers are well formed. */
function luhn(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

export type RandomDataType =
  | 'address'
  | 'latLong'
  | 'creditCard'
  | 'email'
  | 'ipv4'
  | 'ipv6'
  | 'macAddress'
  | 'nanoid'
  | 'url'
  | 'user'
  | 'uuid'
  | 'semver';

/** One generated record of the given type (the shapes of n8n's Debug Helper). */
export function generate(
  type: RandomDataType,
  r: Rand,
  nanoid: { alphabet: string; length: number },
): Record<string, Json> {
  switch (type) {
    case 'address':
      return {
        firstname: pickOne(r, FIRST),
        lastname: pickOne(r, LAST),
        street: `${int(r, 1, 999)} ${pickOne(r, STREETS)}`,
        city: pickOne(r, CITIES),
        zip: String(int(r, 10000, 99999)),
        country: 'US',
      };
    case 'latLong':
      return {
        lat: Math.round((r() * 180 - 90) * 1e6) / 1e6,
        long: Math.round((r() * 360 - 180) * 1e6) / 1e6,
      };
    case 'creditCard': {
      const body = `4${Array.from({ length: 14 }, () => int(r, 0, 9)).join('')}`;
      return {
        type: 'Visa',
        number: body + luhn(body),
        ccv: String(int(r, 100, 999)),
        exp: `${String(int(r, 1, 12)).padStart(2, '0')}/${int(r, 27, 35)}`,
        holder_name: `${pickOne(r, FIRST)} ${pickOne(r, LAST)}`,
      };
    }
    case 'email':
      return { email: email(r) };
    case 'ipv4':
      return { ip: Array.from({ length: 4 }, () => int(r, 0, 255)).join('.') };
    case 'ipv6':
      return { ip: Array.from({ length: 8 }, () => hex(r, 4)).join(':') };
    case 'macAddress':
      return { mac: Array.from({ length: 6 }, () => hex(r, 2)).join(':') };
    case 'nanoid':
      return {
        nanoId: Array.from(
          { length: nanoid.length },
          () => nanoid.alphabet[int(r, 0, nanoid.alphabet.length - 1)],
        ).join(''),
      };
    case 'url':
      return { url: `https://${pickOne(r, DOMAINS)}/${hex(r, 8)}` };
    case 'uuid':
      return { uuid: uuid(r) };
    case 'semver':
      return { version: `${int(r, 0, 9)}.${int(r, 0, 20)}.${int(r, 0, 50)}` };
    default:
      return {
        uid: uuid(r),
        email: email(r),
        firstname: pickOne(r, FIRST),
        lastname: pickOne(r, LAST),
        password: hex(r, 16),
      };
  }
}
