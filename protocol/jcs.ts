import canonicalize from 'canonicalize';

/** RFC 8785 (JCS) text of a JSON value. */
export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no JSON form');
  return text;
}
