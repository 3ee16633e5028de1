/** The longest block name, in UTF-16 code units. */
export const MAX_NAME_LENGTH = 200;

/** Block names are matched after normalization (SPEC §1.2): `<My API.data>` = `<myapi.data>`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\s+/gu, '');
}
