/**
 * Plain objects keyed by data (block ids, normalized block names): every key a workflow may
 * choose must be an ordinary own property. `obj[key] = v` with key `__proto__` changes the
 * prototype instead of storing (JSON.stringify then drops it), and `key in obj` or `obj[key]`
 * with `constructor` or `toString` finds Object.prototype's members. The objects stay ordinary
 * (Object.prototype, no null prototype), so records, JSON and structured clones look as before.
 */

export function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** The own property `key`, or undefined (never an inherited member). */
export function getOwn<T>(obj: Readonly<Record<string, T>>, key: string): T | undefined {
  return hasOwn(obj, key) ? obj[key] : undefined;
}

/** Stores `value` as own data property `key`, `__proto__` included. */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  // plain assignment is faster and equivalent for every other key
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Object.assign without the `__proto__` setter: copies `from`'s own enumerable properties. */
export function assignOwn<T>(target: Record<string, T>, from: Readonly<Record<string, T>>): void {
  for (const key of Object.keys(from)) setOwn(target, key, from[key] as T);
}
