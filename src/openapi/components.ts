type Json = unknown;
type JsonObject = Record<string, Json>;
type Context = 'input' | 'output';

const COMPONENT_PREFIX = '#/components/schemas/';

function isObject(node: Json): node is JsonObject {
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}

/** A schema with a `title` of its own (a property named `title` is an object, never a string). */
function isTitledSchema(node: Json): node is JsonObject & { title: string } {
  return (
    isObject(node) &&
    typeof node.title === 'string' &&
    ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum'].some((key) => key in node)
  );
}

/** A copy without the internal `x-constraint` keyword, which only names the validation error code. */
function withoutInternalKeywords(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutInternalKeywords);
  if (!isObject(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'x-constraint')
      .map(([key, value]) => [key, withoutInternalKeywords(value)]),
  );
}

/** Annotations the generator moves elsewhere (a parameter's description): variants differing in them are one schema. */
const ANNOTATIONS = new Set(['description', 'examples']);

/** What identifies a titled schema: its keywords in a stable order, without annotations, and without `null`. */
function keyOf(node: JsonObject): string {
  const stable = (value: Json): Json =>
    Array.isArray(value)
      ? value.map(stable)
      : isObject(value)
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, stable(value[key])]),
          )
        : value;
  const own = Object.fromEntries(Object.entries(node).filter(([key]) => !ANNOTATIONS.has(key)));
  return JSON.stringify(stable(isNullable(node) ? { ...own, type: nonNullType(node) } : own));
}

function isNullable(node: JsonObject): boolean {
  return Array.isArray(node.type) && node.type.includes('null');
}

function nonNullType(node: JsonObject): Json {
  const types = (node.type as string[]).filter((type) => type !== 'null');
  return types.length === 1 ? types[0] : types;
}

function visit(
  node: Json,
  context: Context,
  onTitled: (node: JsonObject & { title: string }, context: Context) => void,
): void {
  if (Array.isArray(node)) {
    node.forEach((child) => visit(child, context, onTitled));
  } else if (isObject(node)) {
    if (isTitledSchema(node)) onTitled(node, context);
    for (const [key, child] of Object.entries(node)) {
      visit(
        child,
        key === 'responses' ? 'output' : key === 'requestBody' || key === 'parameters' ? 'input' : context,
        onTitled,
      );
    }
  }
}

/**
 * Component names for each distinct titled schema. Where one title covers several schemas (the qualified
 * identifier is a string in responses, a string or an object in requests), the response form keeps the title
 * and a request-only form is named `<title>Input`.
 */
function componentNames(paths: Json, taken: Set<string>): Map<string, string> {
  const variants = new Map<string, Map<string, Set<Context>>>();
  visit(paths, 'output', (node, context) => {
    const byKey = variants.get(node.title) ?? new Map<string, Set<Context>>();
    const key = keyOf(node);
    byKey.set(key, (byKey.get(key) ?? new Set<Context>()).add(context));
    variants.set(node.title, byKey);
  });
  const names = new Map<string, string>();
  for (const [title, byKey] of variants) {
    const ordered = [...byKey].sort(([, a], [, b]) => Number(b.has('output')) - Number(a.has('output')));
    for (const [key, contexts] of ordered) {
      const base = byKey.size > 1 && !contexts.has('output') ? `${title}Input` : title;
      let name = base.replace(/[^A-Za-z0-9._-]/g, '');
      for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
      taken.add(name);
      names.set(key, name);
    }
  }
  return names;
}

function hoist(node: Json, names: Map<string, string>, components: JsonObject): Json {
  if (Array.isArray(node)) return node.map((child) => hoist(child, names, components));
  if (!isObject(node)) return node;
  const name = isTitledSchema(node) ? names.get(keyOf(node)) : undefined;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, hoist(value, names, components)]));
  if (!name) return copy;
  const nullable = isNullable(copy);
  // The first variant seen with the most annotations becomes the component.
  const known = components[name] as JsonObject | undefined;
  if (!known || Object.keys(known).length < Object.keys(copy).length)
    components[name] = nullable ? { ...copy, type: nonNullType(copy) } : copy;
  const ref = { $ref: `${COMPONENT_PREFIX}${name}` };
  return nullable ? { anyOf: [ref, { type: 'null' }] } : ref;
}

/** Moves every titled schema of the operations into `components.schemas` and refers to it there. */
export function hoistTitledSchemas<T extends { paths?: Json; components?: { schemas?: JsonObject } }>(
  document: T,
): T & { components: { schemas: JsonObject } } {
  const paths = withoutInternalKeywords(document.paths ?? {});
  const existing = document.components?.schemas ?? {};
  const names = componentNames(paths, new Set(Object.keys(existing)));
  const schemas: JsonObject = { ...existing };
  const hoisted = hoist(paths, names, schemas);
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((name) => [name, schemas[name]]),
  );
  return { ...document, paths: hoisted, components: { ...document.components, schemas: sorted } };
}
