import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

// The protocol's JSON Schema (protocol/empo2-protocol.schema.json) compiled with ajv (draft
// 2020-12), for tests that check what the extension sends and expects against the one source
// of truth.

export const repoRoot = path.resolve(__dirname, '../../../..');
export const schemaPath = path.join(repoRoot, 'protocol', 'empo2-protocol.schema.json');

interface Schema {
  readonly $id: string;
  readonly $defs: Record<
    string,
    { oneOf?: Array<{ $ref?: string; const?: number; title?: string }> } & Record<string, unknown>
  >;
}

export const schema: Schema = JSON.parse(readFileSync(schemaPath, 'utf8'));

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schema);
const compiled = new Map<string, ValidateFunction>();

/** Ajv's errors for `value` against `#/$defs/<definition>`, as readable lines ([] when valid). */
export function schemaErrors(definition: string, value: unknown): string[] {
  if (!(definition in schema.$defs)) {
    return [`the schema has no definition ${definition}`];
  }
  let validate = compiled.get(definition);
  if (!validate) {
    validate = ajv.getSchema(`${schema.$id}#/$defs/${definition}`)!;
    compiled.set(definition, validate);
  }
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => `${definition}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Methods named by the schema's ClientMessage list (`InitializeRequest` → its method const). */
export function schemaRequestMethods(): Map<string, string> {
  return methodsOf('ClientMessage');
}

/** Notifications named by the schema's Notification list. */
export function schemaNotificationMethods(): Map<string, string> {
  return methodsOf('Notification');
}

/** method → definition name, for each definition a `oneOf` list of the schema refers to. */
function methodsOf(list: 'ClientMessage' | 'Notification'): Map<string, string> {
  const methods = new Map<string, string>();
  for (const ref of schema.$defs[list].oneOf ?? []) {
    const name = ref.$ref!.split('/').pop()!;
    const method = (schema.$defs[name] as { properties: { method: { const: string } } }).properties.method.const;
    methods.set(method, name);
  }
  return methods;
}
