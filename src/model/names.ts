/** Block names are matched after normalization (SPEC §1.2): `<My API.data>` = `<myapi.data>`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\s+/gu, '');
}
