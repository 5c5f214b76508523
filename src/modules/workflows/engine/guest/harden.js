// Runs inside the QuickJS sandbox, last: freezes every object reachable from the global object (built-in
// prototypes, Luxon, JSONata, jmespath, the guest's own functions). One worker's context serves many
// workflows and tenants in turn; without this, an expression such as
// `Array.prototype.map = …` or `JSON.parse = …` would change what the next evaluation sees.
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

  const seen = new Set();
  const stack = [globalThis];

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
