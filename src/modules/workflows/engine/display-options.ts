import { type TSchema, Type } from 'typebox';

/**
 * n8n's `displayOptions` as an annotation on a parameter's schema: when n8n's editor shows the
 * parameter. Only forms read it (the portal's node parameters, served by `GET /api/v1/node-types/schema`);
 * validation ignores it, as it ignores `description`. Semantics are n8n's `displayParameter`: every key of
 * `show` must hold one of its values, any key of `hide` holding one hides; a key is a sibling parameter
 * (`sendBody`, `options.x`), a parameter from the root (`/operation`), or `@version`; a value is a constant
 * or n8n's `{ _cnd: { gte: 3.1 } }` (eq, not, gte, lte, gt, lt, between, includes, startsWith,
 * endsWith, regex, exists). A referenced parameter that is not set counts with its default; one holding
 * an expression shows the parameter. Where n8n describes one name twice (HTTP Request's `bodyParameters`
 * for JSON, form-data and form-urlencoded bodies), the annotation is a list: shown when any is.
 */

export type DisplayCondition =
  | string
  | number
  | boolean
  | { _cnd: Record<string, string | number | boolean | { from: number; to: number }> };

export interface DisplayOptions {
  show?: Record<string, DisplayCondition[]>;
  hide?: Record<string, DisplayCondition[]>;
}

/** Schema options that show a parameter when `show` holds (and no `hide` does). */
export const shownWhen = (show: DisplayOptions['show'], hide?: DisplayOptions['hide']) => ({
  displayOptions: hide ? { show, hide } : { show },
});

/** Schema options that hide a parameter when any key of `hide` holds. */
export const hiddenWhen = (hide: DisplayOptions['hide']) => ({ displayOptions: { hide } });

/** Schema options for a parameter n8n describes more than once: shown when any description is. */
export const shownWhenAny = (...alternatives: DisplayOptions[]) => ({ displayOptions: alternatives });

/** n8n's version conditions (`@version` values). */
export const versionAtLeast = (version: number): DisplayCondition => ({ _cnd: { gte: version } });
export const versionBelow = (version: number): DisplayCondition => ({ _cnd: { lt: version } });

/**
 * Schema options for a value a form generates for a new entry of a list (n8n's editor gives each
 * assignment and condition a UUID `id`).
 */
export const generatedUuid = { generated: 'uuid' } as const;

/** A shared schema (a resource locator, a collection) with a parameter's annotation, the shared one untouched. */
export const annotated = <T extends TSchema>(schema: T, options: Record<string, unknown>): T =>
  Type.With(schema, options as TSchema) as unknown as T;
