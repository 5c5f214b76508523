import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/**
 * Route schemas compiled on their route's first use instead of at start-up. Fastify compiles every
 * route's validators (Ajv) and response serializers (fast-json-stringify) before it listens: for this
 * platform's several hundred routes (and their HEAD twins) that was most of the CPU a start spent
 * (issue 29), while a process serves a handful of them in its first seconds. The compiled function is
 * kept: the second request pays nothing. `compileAll` compiles whatever is still pending, so a test
 * finds a schema that does not compile (a start-up error before) without calling every route.
 */

type AnyFunction = (...args: never[]) => unknown;
type Serializer = (data: unknown) => string;
type SerializerFactory = (
  externalSchemas?: unknown,
  options?: unknown,
) => (route: { schema?: unknown; method: string; url: string; httpStatus: string }) => Serializer;

export interface LazyCompilers {
  /** Wraps a validator compiler (Fastify's `setValidatorCompiler` argument). */
  validator<R, F extends AnyFunction>(compile: (route: R) => F): (route: R) => F;
  /** fast-json-stringify's factory, Fastify's default, compiling each schema on first use. */
  serializerFactory: SerializerFactory;
  /** Compiles every schema not compiled yet; returns how many it compiled. */
  compileAll(): number;
}

export function lazyCompilers(): LazyCompilers {
  const pending = new Set<() => unknown>();
  /** `compile` once, on first call; forgotten by `pending` then. */
  const once = <T>(compile: () => T): (() => T) => {
    let compiled: T | undefined;
    const get = () => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(get);
      }
      return compiled;
    };
    pending.add(get);
    return get;
  };
  const defaultFactory = SerializerSelector() as unknown as SerializerFactory;
  return {
    validator: (compile) => (route) => {
      const get = once(
        () => compile(route) as unknown as ((...args: unknown[]) => unknown) & Record<string, unknown>,
      );
      // The arguments as Fastify passes them: (data), or (data, parent context) to an Ajv function.
      const lazy = (...args: unknown[]) => get()(...args);
      // Fastify reads both on every validation: `schemaEnv` (an Ajv function: pass the parent so the
      // root value may be coerced in place) before the call, `errors` after a failure.
      Object.defineProperty(lazy, 'schemaEnv', { get: () => get().schemaEnv });
      Object.defineProperty(lazy, 'errors', { get: () => get().errors });
      return lazy as unknown as ReturnType<typeof compile>;
    },
    serializerFactory: (externalSchemas, options) => {
      const compile = defaultFactory(externalSchemas, options);
      return (route) => {
        const get = once(() => compile(route));
        return (data) => get()(data);
      };
    },
    compileAll: () => {
      const count = pending.size;
      for (const get of [...pending]) get();
      return count;
    },
  };
}
