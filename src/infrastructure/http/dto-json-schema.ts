import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { BodyRules } from './dto-body-validator';
import { fieldDocOf, JsonSchema, Optionality, optionalityOf, ruleSchemaOf } from './field-rules';

/**
 * The JSON Schema (2020-12) of a request body, read from the class-validator
 * metadata of the DTO that checks it, so that the API documents and the
 * checks are one source. Every decorator the DTOs use is mapped here; any
 * other is refused with an UnknownRuleError rather than left out, so a new
 * rule cannot go undocumented unnoticed. (class-validator-jsonschema was
 * tried: it documents a rule it does not know as `{}`, cannot tell Optional
 * from OptionalNullable, and leaves unknown fields allowed.)
 *
 * How the body is read (BodyRules) is part of the schema: on the merchant
 * API a null field is a missing one, so an optional field may be null there.
 */
export function dtoJsonSchema(dto: new () => object, rules: BodyRules): JsonSchema {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const fields = [...new Set(metadata.map((m) => m.propertyName))];
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const oneNeeded: JsonSchema[] = [];
  for (const field of fields) {
    const own = metadata.filter((m) => m.propertyName === field);
    const where = `${dto.name}.${field}`;
    const optionality = optionalityIn(where, own);
    // Decorators apply bottom-up: reversed, they are in the order the DTO lists them.
    const checks = own.filter((m) => m.type !== ValidationTypes.CONDITIONAL_VALIDATION).reverse();
    if (checks.length === 0) throw new UnknownRuleError(`${where} has no rule to document`);
    let schema = merge(checks.map((m) => constraintSchema(where, m)));
    const doc = fieldDocOf(dto, field);
    if (doc?.description) schema.description = [doc.description, schema.description].filter(Boolean).join('. ');
    if (doc?.examples) schema.examples = [...doc.examples];
    const mayBeNull = optionality?.kind === 'optional or null' || (optionality !== undefined && rules.nullIs === 'absent');
    if (mayBeNull) schema = { anyOf: [schema, { type: 'null' }] };
    properties[field] = schema;
    if (optionality === undefined) required.push(field);
    if (optionality?.kind === 'required unless') oneNeeded.push(present(field, rules), present(optionality.other, rules));
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(oneNeeded.length > 0 ? { anyOf: oneNeeded } : {}),
  };
}

/** A rule the converter has no JSON Schema for: the documents would be wrong, so nothing is documented instead. */
export class UnknownRuleError extends Error {}

type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

function optionalityIn(where: string, own: Metadata[]): Optionality | undefined {
  const conditions = own.filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION);
  if (conditions.length === 0) return undefined;
  const optionality = conditions.length === 1 ? optionalityOf(conditions[0].constraints?.[0]) : undefined;
  if (!optionality) throw new UnknownRuleError(`${where}: a @ValidateIf the documents cannot state (use Optional, OptionalNullable or RequiredUnless)`);
  return optionality;
}

/** A field given, and on the merchant API not null (which is the same as not given). */
const present = (field: string, rules: BodyRules): JsonSchema =>
  rules.nullIs === 'absent' ? { required: [field], properties: { [field]: { not: { type: 'null' } } } } : { required: [field] };

/** One constraint as JSON Schema: a rule of our own carries its schema, class-validator's own are mapped by name. */
function constraintSchema(where: string, m: Metadata): JsonSchema {
  const c = m.constraints ?? [];
  if (m.type !== ValidationTypes.CUSTOM_VALIDATION || m.each || (m.groups ?? []).length > 0 || m.always || m.validateIf) {
    throw new UnknownRuleError(`${where}: @${m.name ?? m.type}${m.each ? ' with each' : ''} has no JSON Schema in dto-json-schema.ts`);
  }
  const own = ruleSchemaOf(m.context);
  if (own) {
    const description = [own.schema.description, own.beyond].filter(Boolean).join('. ');
    return description ? { ...own.schema, description } : { ...own.schema };
  }
  switch (m.name) {
    case 'isString':
      return { type: 'string' };
    // class-validator counts a character and its variation selector (U+FE0E, U+FE0F) as one; JSON Schema counts code points.
    case 'isLength':
      return { type: 'string', minLength: c[0], ...(c[1] === undefined ? {} : { maxLength: c[1] }) };
    case 'isIn':
      return { enum: [...(c[0] as unknown[])] };
    case 'isBoolean':
      return { type: 'boolean' };
    case 'isInt':
      return { type: 'integer' };
    case 'min':
      return { type: 'number', minimum: c[0] };
    case 'max':
      return { type: 'number', maximum: c[0] };
    case 'matches': {
      const pattern = c[0] as RegExp | string;
      // A flag would change what the pattern means; JSON Schema patterns take none.
      if (c[1] || (pattern instanceof RegExp && pattern.flags !== '')) throw new UnknownRuleError(`${where}: @Matches with flags has no JSON Schema`);
      return { type: 'string', pattern: pattern instanceof RegExp ? pattern.source : pattern };
    }
    default:
      throw new UnknownRuleError(`${where}: @${m.name} has no JSON Schema in dto-json-schema.ts`);
  }
}

/**
 * Several constraints on one field as one schema: their keywords side by
 * side while they agree (an integer is the narrower number), else allOf.
 */
function merge(schemas: JsonSchema[]): JsonSchema {
  const merged: JsonSchema = {};
  for (const schema of schemas) {
    for (const [key, value] of Object.entries(schema)) {
      if (!(key in merged)) merged[key] = value;
      else if (
        key === 'type' &&
        new Set([merged.type, value]).size === 2 &&
        [merged.type, value].includes('integer') &&
        [merged.type, value].includes('number')
      )
        merged.type = 'integer';
      else if (key === 'description') merged.description = `${String(merged.description)}. ${String(value)}`;
      else if (JSON.stringify(merged[key]) !== JSON.stringify(value)) return { allOf: schemas };
    }
  }
  return merged;
}
