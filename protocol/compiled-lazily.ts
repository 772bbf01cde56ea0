import type { Ajv, ValidateFunction } from 'ajv';

/** `schema`'s validator, compiled on its first use: compiling every schema at import is a fifth of a second of start-up. */
export function compiledLazily(ajv: Ajv, schema: object): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= ajv.compile(schema));
}
