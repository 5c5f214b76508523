// Runs inside the QuickJS sandbox, last: freezes every object reachable from the global object (built-in
// prototypes, Luxon, JSONata, jmespath, the guest's own functions) and from the hidden intrinsics no
// property walk from the global object reaches (iterator and generator prototypes, %ThrowTypeError%,
// Luxon's internal classes). Each execution starts from the heap as it is after this script (the worker
// restores it), so freezing is what keeps the Code nodes and expressions of one execution from changing
// each other's built-ins (`Array.prototype.map = …`, `JSON.parse = …`).
// Like SES's "override mistake" repair, a few inherited data properties that code commonly assigns on
// its own objects (toString, constructor, message, name …) become accessors whose setter defines an own
// property, so `obj.toString = f` still works on a plain object after its prototype is frozen.
(() => {
  // `push` and `apply`: JSONata sets its own on the arrays and functions it builds.
  const OVERRIDABLE = [
    'constructor',
    'toString',
    'valueOf',
    'toJSON',
    'toLocaleString',
    'name',
    'message',
    'push',
    'apply',
  ];

  // Math.random from the host: QuickJS's generator state would be restored, and replayed, with the heap.
  const hostRandom = globalThis.__hostRandom;
  Object.defineProperty(Math, 'random', {
    value: function random() {
      return hostRandom();
    },
    writable: true,
    configurable: true,
  });

  // Luxon's Settings are module state behind static setters (freezing the class leaves them working):
  // guest code cannot change them. The default zone is the workflow's, set by the evaluator before each
  // call through the setter n8n-extensions.js kept; locale, clock, throwOnInvalid … stay Luxon's defaults.
  const settings = globalThis.luxon?.Settings;
  if (settings) {
    for (const key of Reflect.ownKeys(settings)) {
      const desc = Object.getOwnPropertyDescriptor(settings, key);
      if (!desc?.set) continue;
      Object.defineProperty(settings, key, {
        get: desc.get,
        set() {
          throw new TypeError(`Luxon's Settings.${String(key)} cannot be changed in this sandbox`);
        },
        enumerable: desc.enumerable,
        configurable: false,
      });
    }
  }

  // Intrinsics that exist without a name on the global object; each is walked (prototype, constructor,
  // methods) like the rest.
  const hidden = [
    [][Symbol.iterator](),
    ''[Symbol.iterator](),
    new Map()[Symbol.iterator](),
    new Set()[Symbol.iterator](),
    /x/[Symbol.matchAll](''),
    function* () {},
    (function* () {})(),
    async function* () {},
    (async function* () {})(),
    async () => {},
    (function () {
      // biome-ignore lint/complexity/noArguments: a strict (module) arguments object's callee is %ThrowTypeError%.
      return Object.getOwnPropertyDescriptor(arguments, 'callee')?.get;
    })(),
    Object.getOwnPropertyDescriptor(Function.prototype, 'caller')?.get,
  ];
  // Iterator helpers' own prototypes (%IteratorHelperPrototype%, %WrapForValidIteratorPrototype%).
  if (typeof Iterator === 'function') {
    hidden.push(
      [].values().map((x) => x),
      Iterator.from({ next: () => ({ done: true }) }),
    );
  }
  // Luxon's internal classes (Locale, formatters, zones) are reached only through instances.
  const luxon = globalThis.luxon;
  if (luxon) {
    const dt = luxon.DateTime.fromISO('2020-01-02T03:04:05', { zone: 'UTC' });
    hidden.push(dt.loc, dt.zone, luxon.Duration.fromObject({ hours: 1 }).loc);
    hidden.push(luxon.DateTime.fromISO('nope').invalid, luxon.FixedOffsetZone.instance(60));
  }
  const roots = hidden.filter((x) => x !== undefined && x !== null).map((x) => Object.getPrototypeOf(x));

  const seen = new Set();
  const stack = [globalThis, ...roots];

  const repair = (obj) => {
    for (const name of OVERRIDABLE) {
      const desc = Object.getOwnPropertyDescriptor(obj, name);
      if (!desc || !('value' in desc) || !desc.configurable) continue;
      const value = desc.value;
      const get = () => value;
      const set = function (next) {
        if (this === obj) throw new TypeError(`Cannot assign to read only property '${name}'`);
        Object.defineProperty(this, name, {
          value: next,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      };
      // The accessors are ours: frozen here, never walked (walking them would repair them in turn).
      seen.add(Object.freeze(get));
      seen.add(Object.freeze(set));
      stack.push(value);
      Object.defineProperty(obj, name, { get, set, enumerable: desc.enumerable, configurable: false });
    }
  };

  while (stack.length > 0) {
    const obj = stack.pop();
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function') || seen.has(obj)) continue;
    seen.add(obj);
    // Prototypes are what other code inherits from (and assigns over by mistake).
    if (typeof obj !== 'function' && Object.hasOwn(obj, 'constructor')) repair(obj);
    stack.push(Object.getPrototypeOf(obj));
    for (const key of Reflect.ownKeys(obj)) {
      const desc = Object.getOwnPropertyDescriptor(obj, key);
      if (!desc) continue;
      if ('value' in desc) stack.push(desc.value);
      else {
        stack.push(desc.get);
        stack.push(desc.set);
      }
    }
    Object.freeze(obj);
  }
})();

export {};
