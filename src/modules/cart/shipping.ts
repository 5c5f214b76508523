import type { Address } from './address.js';
import shippingTable from './data/shipping.json' with { type: 'json' };
import taxTable from './data/tax-rates.json' with { type: 'json' };

interface Method {
  method: string;
  carrier: string;
  cost: number;
  minDays: number;
  maxDays: number;
}
interface Zone {
  countries: string[];
  states?: string[];
  excludeStates?: string[];
  methods: Method[];
}

const zones = shippingTable.zones as Record<string, Zone>;
export const FREE_SHIPPING_THRESHOLD = shippingTable.freeShippingThreshold;

/** The zone of an address: the first whose countries (and states) match; `*` matches any country. */
function zoneOf(address: Address): { name: string; zone: Zone } {
  const country = address.country.toUpperCase();
  const state = address.state?.toUpperCase();
  for (const [name, zone] of Object.entries(zones)) {
    if (!zone.countries.includes(country) && !zone.countries.includes('*')) continue;
    if (zone.states && (!state || !zone.states.includes(state))) continue;
    if (zone.excludeStates && state && zone.excludeStates.includes(state)) continue;
    return { name, zone };
  }
  throw new Error('shipping table has no catch-all zone');
}

/** `days` business days after `from` (weekends skipped), as a UTC date. */
function addBusinessDays(from: Date, days: number): Date {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  let left = days;
  while (left > 0) {
    d.setUTCDate(d.getUTCDate() + 1);
    const day = d.getUTCDay();
    if (day !== 0 && day !== 6) left--;
  }
  return d;
}

const label = (d: Date) =>
  d.toLocaleDateString('en-US', { weekday: 'short', month: 'short', day: 'numeric', timeZone: 'UTC' });

interface Estimate {
  method: string;
  carrier: string;
  /** Minor units. */
  cost: number;
  estimatedDelivery: string;
  estimatedDeliveryMin: string;
  estimatedDeliveryMax: string;
}

/** Rates and dates for an address; `freeStandard` makes standard shipping free. */
export function estimatesFor(address: Address, now: Date, freeStandard: boolean): Estimate[] {
  return zoneOf(address).zone.methods.map((m) => {
    const min = addBusinessDays(now, m.minDays);
    const max = addBusinessDays(now, m.maxDays);
    const days = m.minDays === m.maxDays ? `${m.minDays}` : `${m.minDays}–${m.maxDays}`;
    return {
      method: m.method,
      carrier: m.carrier,
      cost: freeStandard && m.method === 'standard' ? 0 : Math.round(m.cost * 100),
      estimatedDelivery: `${days} business day${m.maxDays === 1 ? '' : 's'} (${label(min)}${m.minDays === m.maxDays ? '' : ` – ${label(max)}`})`,
      estimatedDeliveryMin: min.toISOString().slice(0, 10),
      estimatedDeliveryMax: max.toISOString().slice(0, 10),
    };
  });
}

interface TaxCountry {
  rate: number;
  states?: Record<string, number>;
}

/** The sales-tax rate of an address (state, else country, else the default). */
export function taxRateFor(country: string | null, state: string | null, fallback: number): number {
  if (!country) return fallback;
  const entry = (taxTable.countries as Record<string, TaxCountry>)[country.toUpperCase()];
  if (!entry) return taxTable.default;
  const byState = state ? entry.states?.[state.toUpperCase()] : undefined;
  return byState ?? entry.rate;
}
