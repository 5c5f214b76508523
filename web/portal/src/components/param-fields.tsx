import { useRef, useState } from 'preact/hooks';
import { isShown } from './param-display.js';
import {
  choicesOf,
  getAt,
  isExpression,
  kindOf,
  labelOf,
  newEntry,
  numberFrom,
  type ParamSchema,
  type Path,
  pathText,
  unwrap,
} from './param-schema.js';

/** What every field of one node's form shares: the values, the setter and the API's problems by path. */
export interface FormContext {
  values: unknown;
  set(path: Path, value: unknown): void;
  /** The API's messages by parameter path (`options.timeout`, `assignments.assignments[0].name`). */
  problems: Map<string, string[]>;
  /** Prefix of the form's element ids (one form per node). */
  idBase: string;
  /** A field's own complaint (text that is not JSON), empty when it has none: saving waits for none. */
  complain(path: Path, message: string): void;
  /** The node's whole parameter schema, its typeVersion, and whether it is a `…Tool` (for displayOptions). */
  schema: ParamSchema;
  version: number;
  tool: boolean;
}

const idOf = (ctx: FormContext, path: Path) => `${ctx.idBase}-${pathText(path).replace(/[^\w-]/g, '_')}`;
const shown = (value: unknown) =>
  value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);

/** The hint and problems under a field, and the attributes that tie them to its input. */
function useDescribed(ctx: FormContext, path: Path, schema: ParamSchema, withDefault: boolean) {
  const id = idOf(ctx, path);
  const problems = ctx.problems.get(pathText(path)) ?? [];
  const hintText = [
    schema.description,
    withDefault && schema.default !== undefined && schema.default !== ''
      ? `Default: ${shown(schema.default)}`
      : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const ids = [hintText ? `${id}-hint` : '', problems.length ? `${id}-problem` : '']
    .filter(Boolean)
    .join(' ');
  const attrs = {
    id,
    'aria-invalid': problems.length > 0 ? true : undefined,
    'aria-describedby': ids || undefined,
  };
  const notes = (
    <>
      {hintText && (
        <span class="hint" id={`${id}-hint`}>
          {hintText}
        </span>
      )}
      {problems.length > 0 && (
        <span class="field-problem" id={`${id}-problem`}>
          {problems.join('; ')}
        </span>
      )}
    </>
  );
  return { attrs, notes };
}

/** One parameter: the widget its schema calls for; an expression (`={{ … }}`) is edited as text. */
export function ParamField(props: {
  ctx: FormContext;
  name: string;
  schema: ParamSchema;
  path: Path;
  required: boolean;
}) {
  const { ctx, path } = props;
  const schema = unwrap(props.schema);
  const value = getAt(ctx.values, path);
  const kind = kindOf(schema);
  const label = labelOf(props.name, schema);
  if (kind === 'const' || kind === 'none') return null;
  if (isExpression(value) && kind !== 'string' && kind !== 'json')
    return <TextField {...props} label={`${label} (expression)`} schema={schema} multiline={false} />;
  switch (kind) {
    case 'string':
      return (
        <TextField
          {...props}
          label={label}
          schema={schema}
          multiline={multiline(props.name, value, schema.default)}
        />
      );
    case 'number':
      return <NumberField {...props} label={label} schema={schema} />;
    case 'boolean':
      return <BooleanField {...props} label={label} schema={schema} />;
    case 'enum':
      return <EnumField {...props} label={label} schema={schema} />;
    case 'object':
      return <ObjectFields {...props} label={label} schema={schema} />;
    case 'array':
      return <RepeatableGroup {...props} label={label} schema={schema} />;
    default:
      return <JsonField {...props} label={label} schema={schema} />;
  }
}

const CODE_NAMES = /code$|^query$|html|^body$|^text$|^content$|prompt|message|script|template/i;
const multiline = (name: string, value: unknown, fallback: unknown) =>
  CODE_NAMES.test(name) ||
  (typeof value === 'string' && (value.includes('\n') || value.length > 80)) ||
  (typeof fallback === 'string' && fallback.includes('\n'));

interface FieldProps {
  ctx: FormContext;
  name: string;
  label: string;
  schema: ParamSchema;
  path: Path;
  required: boolean;
}

function TextField(props: FieldProps & { multiline: boolean }) {
  const { ctx, path, schema } = props;
  const value = getAt(ctx.values, path);
  const { attrs, notes } = useDescribed(ctx, path, schema, false);
  // Cleared, a parameter with a default goes back to it (as n8n leaves defaults out of an export).
  const onInput = (e: Event) => {
    const text = (e.currentTarget as HTMLInputElement).value;
    ctx.set(path, text === '' && schema.default !== undefined ? undefined : text);
  };
  const placeholder =
    typeof schema.default === 'string' && schema.default !== '' ? schema.default : undefined;
  return (
    <div class="field">
      <label for={attrs.id}>{props.label}</label>
      {props.multiline ? (
        <textarea
          {...attrs}
          rows={4}
          spellcheck={false}
          value={shown(value)}
          placeholder={placeholder}
          onInput={onInput}
        />
      ) : (
        <input {...attrs} type="text" value={shown(value)} placeholder={placeholder} onInput={onInput} />
      )}
      {notes}
    </div>
  );
}

function NumberField(props: FieldProps) {
  const { ctx, path, schema } = props;
  const value = getAt(ctx.values, path);
  const { attrs, notes } = useDescribed(ctx, path, schema, false);
  return (
    <div class="field">
      <label for={attrs.id}>{props.label}</label>
      <input
        {...attrs}
        type="text"
        inputMode="decimal"
        value={shown(value)}
        placeholder={schema.default !== undefined ? String(schema.default) : undefined}
        onInput={(e) => ctx.set(path, numberFrom(e.currentTarget.value))}
      />
      {notes}
    </div>
  );
}

function BooleanField(props: FieldProps) {
  const { ctx, path, schema } = props;
  const value = getAt(ctx.values, path);
  const { attrs, notes } = useDescribed(ctx, path, schema, false);
  // An optional switch without a default has three states: unset, on, off.
  if (!props.required && schema.default === undefined)
    return (
      <div class="field">
        <label for={attrs.id}>{props.label}</label>
        <select
          {...attrs}
          value={value === undefined ? '' : String(value)}
          onChange={(e) => {
            const v = e.currentTarget.value;
            ctx.set(path, v === '' ? undefined : v === 'true');
          }}
        >
          <option value="">(not set)</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </select>
        {notes}
      </div>
    );
  return (
    <div class="field check">
      <input
        {...attrs}
        type="checkbox"
        checked={value === undefined ? schema.default === true : value === true}
        onChange={(e) => ctx.set(path, e.currentTarget.checked)}
      />
      <label for={attrs.id}>{props.label}</label>
      {notes}
    </div>
  );
}

function EnumField(props: FieldProps) {
  const { ctx, path, schema } = props;
  const value = getAt(ctx.values, path);
  const choices = choicesOf(schema) ?? [];
  const { attrs, notes } = useDescribed(ctx, path, schema, false);
  const current = value === undefined ? schema.default : value;
  const at = choices.indexOf(current);
  // A value the schema does not list (an older export) stays selectable until changed.
  const listed = at >= 0 || current === undefined ? choices : [...choices, current];
  const selected = at >= 0 ? at : current === undefined ? -1 : choices.length;
  return (
    <div class="field">
      <label for={attrs.id}>{props.label}</label>
      <select
        {...attrs}
        value={String(selected)}
        onChange={(e) => {
          const i = Number(e.currentTarget.value);
          ctx.set(path, i < 0 ? undefined : listed[i]);
        }}
      >
        {selected === -1 && <option value="-1">(not set)</option>}
        {listed.map((c, i) => (
          <option key={String(c)} value={String(i)}>
            {String(c)}
            {c === schema.default ? ' (default)' : ''}
          </option>
        ))}
      </select>
      {notes}
    </div>
  );
}

/** A collection (n8n's options / additional fields): its properties as fields in a group. */
function ObjectFields(props: FieldProps & { bare?: boolean }) {
  const { ctx, path, schema } = props;
  const problems = ctx.problems.get(pathText(path)) ?? [];
  // Parameters whose n8n displayOptions do not hold for the current values are not shown.
  const scope = {
    level: getAt(ctx.values, path),
    levelSchema: schema,
    root: ctx.values,
    rootSchema: ctx.schema,
    version: ctx.version,
    tool: ctx.tool,
  };
  const visible = Object.entries(schema.properties ?? {}).filter(([, child]) => isShown(child, scope));
  const fields = visible.map(([name, child]) => (
    <ParamField
      key={name}
      ctx={ctx}
      name={name}
      schema={child}
      path={[...path, name]}
      required={schema.required?.includes(name) === true}
    />
  ));
  // n8n's fixed collection `{ values: [ … ] }`: its one list is shown without a group around it.
  const keys = Object.keys(schema.properties ?? {});
  const only = keys.length === 1 ? schema.properties?.[keys[0] ?? ''] : undefined;
  if (props.bare || (only && kindOf(only) === 'array' && problems.length === 0)) return <>{fields}</>;
  return (
    <fieldset id={idOf(ctx, path)} aria-invalid={problems.length > 0 ? true : undefined}>
      <legend>{props.label}</legend>
      {schema.description && <span class="hint">{schema.description}</span>}
      {problems.length > 0 && <span class="field-problem">{problems.join('; ')}</span>}
      {fields}
    </fieldset>
  );
}

/** A list of entries (n8n's fixedCollection values, a list of strings): add, edit, remove. */
function RepeatableGroup(props: FieldProps) {
  const { ctx, path, schema } = props;
  const raw = getAt(ctx.values, path);
  const entries = Array.isArray(raw) ? raw : [];
  const item = unwrap(schema.items ?? {});
  const itemKind = kindOf(item);
  const group = useRef<HTMLFieldSetElement>(null);
  const problems = ctx.problems.get(pathText(path)) ?? [];
  const single = props.label.replace(/s$/, '').toLowerCase() || 'entry';
  const focusIn = (selector: string) =>
    requestAnimationFrame(() => group.current?.querySelector<HTMLElement>(selector)?.focus());
  const add = () => {
    ctx.set(path, [...entries, newEntry(item)]);
    focusIn(`[data-entry="${entries.length}"] :is(input, select, textarea)`);
  };
  const remove = (at: number) => {
    ctx.set(
      path,
      entries.filter((_, i) => i !== at),
    );
    focusIn('button.add-entry');
  };
  return (
    <fieldset
      ref={group}
      id={idOf(ctx, path)}
      class="group"
      aria-invalid={problems.length > 0 ? true : undefined}
    >
      <legend>{props.label}</legend>
      {schema.description && <span class="hint">{schema.description}</span>}
      {problems.length > 0 && <span class="field-problem">{problems.join('; ')}</span>}
      {entries.map((_, i) => (
        // Entries have no identity but their place; removing one re-renders those after it.
        <div class="entry" key={i} data-entry={i}>
          {itemKind === 'object' ? (
            <ObjectFields
              ctx={ctx}
              name={`${props.name} ${i + 1}`}
              label={`${props.label} ${i + 1}`}
              schema={item}
              path={[...path, i]}
              required
              bare
            />
          ) : (
            <ParamField ctx={ctx} name={`${single} ${i + 1}`} schema={item} path={[...path, i]} required />
          )}
          <button type="button" onClick={() => remove(i)}>
            Remove {single} {i + 1}
          </button>
        </div>
      ))}
      <button type="button" class="add-entry" onClick={add}>
        Add {single}
      </button>
    </fieldset>
  );
}

/**
 * Any value as JSON text; a string value (n8n's JSON parameters hold JSON text) is edited as it is.
 * Text that does not parse is kept here, named at the field, and not saved.
 */
function JsonField(props: FieldProps) {
  const { ctx, path, schema } = props;
  const value = getAt(ctx.values, path);
  const asText = typeof value === 'string' || (value === undefined && typeof schema.default === 'string');
  const initial = value === undefined ? '' : asText ? String(value) : JSON.stringify(value, null, 2);
  const [text, setText] = useState(initial);
  const [bad, setBad] = useState('');
  const described = useDescribed(ctx, path, schema, !asText);
  const problemId = `${idOf(ctx, path)}-json`;
  const placeholder = typeof schema.default === 'string' ? schema.default : undefined;
  const complainOf = (message: string) => {
    setBad(message);
    ctx.complain(path, message);
  };
  return (
    <div class="field">
      <label for={described.attrs.id}>
        {props.label}
        {asText ? '' : ' (JSON)'}
      </label>
      <textarea
        {...described.attrs}
        aria-invalid={bad || described.attrs['aria-invalid'] ? true : undefined}
        aria-describedby={
          [described.attrs['aria-describedby'], bad ? problemId : ''].filter(Boolean).join(' ') || undefined
        }
        class="code"
        rows={Math.min(12, Math.max(3, text.split('\n').length))}
        spellcheck={false}
        value={text}
        placeholder={placeholder}
        onInput={(e) => {
          const next = e.currentTarget.value;
          setText(next);
          if (next.trim() === '') {
            complainOf('');
            ctx.set(path, undefined);
          } else if (asText || isExpression(next)) {
            complainOf('');
            ctx.set(path, next);
          } else {
            try {
              ctx.set(path, JSON.parse(next));
              complainOf('');
            } catch (error) {
              complainOf(`Not JSON: ${error instanceof Error ? error.message : String(error)}`);
            }
          }
        }}
      />
      {described.notes}
      {bad && (
        <span class="field-problem" id={problemId}>
          {bad}
        </span>
      )}
    </div>
  );
}

export { ObjectFields };
