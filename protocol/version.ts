/** The version of the service and of the `pact` CLI built from this tree (package.json says the same; a test holds them together). */
export const VERSION = '0.1.0';
