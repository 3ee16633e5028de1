/**
 * A cache keyed by source text, bounded in entries and in the characters of its keys (function
 * code can run to many kilobytes), cleared whole when either bound would be passed: the texts a
 * service keeps running are few, and they come back at once.
 */
export class TextCache<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxChars: number,
  ) {}

  get(text: string): V | undefined {
    return this.entries.get(text);
  }

  has(text: string): boolean {
    return this.entries.has(text);
  }

  set(text: string, value: V): void {
    if (text.length > this.maxChars) return;
    if (this.entries.size >= this.maxEntries || this.chars + text.length > this.maxChars) {
      this.entries.clear();
      this.chars = 0;
    }
    this.entries.set(text, value);
    this.chars += text.length;
  }
}
