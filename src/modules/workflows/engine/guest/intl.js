// Runs inside the QuickJS sandbox, before Luxon: QuickJS has no Intl, and Luxon needs it for time zones
// and localized formats. This `Intl` forwards to the worker's Node Intl through `__hostIntl`, which
// takes and returns only strings and numbers; the function is then removed from the global object.
(() => {
  const host = globalThis.__hostIntl;
  delete globalThis.__hostIntl;
  const localeOf = (locales) => (Array.isArray(locales) ? String(locales[0] ?? '') : String(locales ?? ''));
  const optionsOf = (options) => (options === undefined ? '' : JSON.stringify(options));
  const ms = (date) => (date === undefined ? Date.now() : typeof date === 'number' ? date : +date);

  class DateTimeFormat {
    #locale;
    #options;
    constructor(locales, options) {
      this.#locale = localeOf(locales);
      this.#options = optionsOf(options);
      // Validates the zone and locale now, as Intl does (Luxon relies on the RangeError).
      host('date-resolved', this.#locale, this.#options, 0);
    }
    resolvedOptions() {
      return JSON.parse(host('date-resolved', this.#locale, this.#options, 0));
    }
    format(date) {
      return host('date-format', this.#locale, this.#options, ms(date));
    }
    formatToParts(date) {
      return JSON.parse(host('date-parts', this.#locale, this.#options, ms(date)));
    }
  }

  class NumberFormat {
    #locale;
    #options;
    constructor(locales, options) {
      this.#locale = localeOf(locales);
      this.#options = optionsOf(options);
      host('number-resolved', this.#locale, this.#options, 0);
    }
    resolvedOptions() {
      return JSON.parse(host('number-resolved', this.#locale, this.#options, 0));
    }
    format(n) {
      return host('number-format', this.#locale, this.#options, Number(n));
    }
  }

  globalThis.Intl = { DateTimeFormat, NumberFormat };
  Number.prototype.toLocaleString = function (locales, options) {
    return new NumberFormat(locales, options).format(this);
  };
})();

export {};
