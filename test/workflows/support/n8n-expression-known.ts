/**
 * The cases of n8n's expression-extension table (test/fixtures/n8n/expressions/cases.json) the platform
 * does not match, each with the reason: n8n-expressions.test.ts checks each still fails, and
 * `npm run nodes-report` counts them. No test-runner import here.
 */
export const KNOWN: Record<string, string> = {
  'string-extensions.test.ts > String Data Transformation Functions > .length should return the string length #1':
    "n8n rewrites `.length()` into a call at parse time; here an expression is plain JavaScript, where a string's length is a number, not a method (write `.length`)",
  'generic-extensions.test.ts > Genric Data Transformation Functions > .isEmpty() should work correctly on undefined #1':
    'n8n rewrites every extension call at parse time, so `(undefined).isEmpty()` reaches its function; plain JavaScript cannot call a method of undefined (write `$ifEmpty(x, …)` or `x?.isEmpty() ?? true`)',
  'object-extensions.test.ts > Object Data Transformation Functions > .compact > should not allow prototype pollution #1':
    "n8n refuses `__proto__` in an object literal ('invalid syntax') to protect its shared process; here the literal runs in the execution's own QuickJS heap with frozen built-ins, so it changes nothing outside the expression and is allowed",
  'object-extensions.test.ts > Object Data Transformation Functions > .compact > should not allow prototype pollution #2':
    "n8n refuses `constructor.prototype` in an object literal ('invalid syntax'); here it is an ordinary field name in the execution's own sandbox, where built-ins are frozen",
};
