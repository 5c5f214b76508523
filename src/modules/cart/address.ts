/** Address checks for shipping and tax: ISO 3166-1 alpha-2 countries, postal codes, states. */

const ISO_COUNTRIES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO ' +
    'JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR ' +
    'MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO ' +
    'RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV ' +
    'TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/**
 * The codes checkAddress accepts, in any case, as a JSON Schema pattern (patterns take no flags):
 * documented on the address, checked here with this module's own message.
 */
export const COUNTRY_CODE_PATTERN = (() => {
  const seconds = new Map<string, string>();
  for (const code of ISO_COUNTRIES)
    seconds.set(code.charAt(0), (seconds.get(code.charAt(0)) ?? '') + code.charAt(1));
  const groups = [...seconds].map(([a, bs]) => `[${a}${a.toLowerCase()}][${bs}${bs.toLowerCase()}]`);
  return `^(?:${groups.join('|')})$`;
})();

/** States, provinces and territories, where the country requires one. */
const STATES: Record<string, ReadonlySet<string>> = {
  US: new Set(
    (
      'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK ' +
      'OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP AA AE AP'
    ).split(' '),
  ),
  CA: new Set('AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' ')),
  AU: new Set('ACT NSW NT QLD SA TAS VIC WA'.split(' ')),
};

const POSTAL_CODES: Record<string, RegExp> = {
  US: /^\d{5}(-\d{4})?$/,
  CA: /^[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d$/i,
  GB: /^(GIR ?0AA|[A-PR-UWYZ]([0-9]{1,2}|[A-HK-Y][0-9]([0-9ABEHMNPRV-Y])?|[0-9][A-HJKPS-UW]) ?[0-9][ABD-HJLNP-UW-Z]{2})$/i,
  DE: /^\d{5}$/,
  FR: /^\d{5}$/,
  AU: /^\d{4}$/,
  NL: /^\d{4} ?[A-Z]{2}$/i,
};
const ANY_POSTAL = /^[A-Za-z0-9][A-Za-z0-9 -]{0,9}$/;

export interface Address {
  postalCode: string;
  country: string;
  state?: string;
}

/** Every problem with an address, as `{field, message}` (empty: valid). Country and state are upper-cased. */
export function checkAddress(address: Address): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const country = address.country.toUpperCase();
  if (!ISO_COUNTRIES.has(country)) {
    problems.push({ field: 'address.country', message: 'must be an ISO 3166-1 alpha-2 country code' });
    return problems;
  }
  const pattern = POSTAL_CODES[country] ?? ANY_POSTAL;
  if (!pattern.test(address.postalCode.trim())) {
    problems.push({ field: 'address.postalCode', message: `is not a valid postal code for ${country}` });
  }
  const states = STATES[country];
  if (states) {
    const state = address.state?.toUpperCase();
    if (!state) problems.push({ field: 'address.state', message: `is required for ${country}` });
    else if (!states.has(state))
      problems.push({ field: 'address.state', message: `is not a state of ${country}` });
  }
  return problems;
}
