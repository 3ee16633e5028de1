/**
 * Subscription index of the in-process bus: which subscriptions receive a published subject.
 *
 * Literal subscriptions live in a Map keyed by subject (one lookup per publish, the runtime's
 * common case); wildcard subscriptions live in a token trie that is only walked while at least one
 * exists. Empty trie nodes are pruned on unsubscribe so per-execution wildcards do not leak.
 *
 * Queue groups follow the NATS server: members are grouped by queue name across every matching
 * subscription (so `jobs.run` and `jobs.*` in queue `w` form one group for `jobs.run`), and each
 * group gets one delivery, chosen round-robin per queue name (NATS picks at random; both give
 * "exactly one member per message", round-robin is also even and deterministic).
 */
import type { BusMsg } from './types.js';
import { isWildcard } from './subjects.js';

export interface MemSub {
  readonly subject: string;
  readonly queue: string | undefined;
  readonly handler: (msg: BusMsg) => void;
  active: boolean;
}

/** queue name → matching members, built per publish only when queue subscribers match */
type Groups = Map<string, MemSub[]>;

class Interest {
  plain: MemSub[] = [];
  queues: Map<string, MemSub[]> | undefined;

  add(sub: MemSub): void {
    if (sub.queue === undefined) {
      this.plain.push(sub);
      return;
    }
    this.queues ??= new Map();
    const members = this.queues.get(sub.queue);
    if (members) members.push(sub);
    else this.queues.set(sub.queue, [sub]);
  }

  remove(sub: MemSub): void {
    if (sub.queue === undefined) {
      removeItem(this.plain, sub);
      return;
    }
    const members = this.queues?.get(sub.queue);
    if (!members) return;
    removeItem(members, sub);
    if (members.length === 0) this.queues?.delete(sub.queue);
  }

  isEmpty(): boolean {
    return this.plain.length === 0 && (this.queues === undefined || this.queues.size === 0);
  }

  /** Appends plain receivers to `out` and queue members to `groups` (created on demand). */
  collect(out: MemSub[], groups: Groups | undefined): Groups | undefined {
    const plain = this.plain;
    for (let i = 0; i < plain.length; i++) out.push(plain[i] as MemSub);
    if (this.queues === undefined || this.queues.size === 0) return groups;
    groups ??= new Map();
    for (const [queue, members] of this.queues) {
      const all = groups.get(queue);
      // concat, never push: `members` is this interest's own list
      groups.set(queue, all === undefined ? members : all.concat(members));
    }
    return groups;
  }
}

function removeItem<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}

class TrieNode {
  literal: Map<string, TrieNode> | undefined;
  star: TrieNode | undefined;
  /** subscriptions ending in `>` at this depth */
  rest: Interest | undefined;
  /** subscriptions ending exactly here */
  here: Interest | undefined;

  isEmpty(): boolean {
    return (this.literal === undefined || this.literal.size === 0) && this.star === undefined && this.rest === undefined && this.here === undefined;
  }
}

export class SubscriptionIndex {
  private readonly exact = new Map<string, Interest>();
  private readonly root = new TrieNode();
  private wildcards = 0;
  /** per queue name: live members (for cleanup) and the round-robin cursor */
  private readonly queues = new Map<string, { members: number; next: number }>();

  add(sub: MemSub): void {
    if (sub.queue !== undefined) {
      const q = this.queues.get(sub.queue);
      if (q) q.members++;
      else this.queues.set(sub.queue, { members: 1, next: 0 });
    }
    if (!isWildcard(sub.subject)) {
      let interest = this.exact.get(sub.subject);
      if (interest === undefined) {
        interest = new Interest();
        this.exact.set(sub.subject, interest);
      }
      interest.add(sub);
      return;
    }
    this.wildcards++;
    let node = this.root;
    const tokens = sub.subject.split('.');
    for (const t of tokens) {
      if (t === '>') {
        (node.rest ??= new Interest()).add(sub);
        return;
      }
      if (t === '*') node = node.star ??= new TrieNode();
      else {
        node.literal ??= new Map();
        let child = node.literal.get(t);
        if (child === undefined) {
          child = new TrieNode();
          node.literal.set(t, child);
        }
        node = child;
      }
    }
    (node.here ??= new Interest()).add(sub);
  }

  remove(sub: MemSub): void {
    if (sub.queue !== undefined) {
      const q = this.queues.get(sub.queue);
      if (q !== undefined && --q.members === 0) this.queues.delete(sub.queue);
    }
    if (!isWildcard(sub.subject)) {
      const interest = this.exact.get(sub.subject);
      if (interest === undefined) return;
      interest.remove(sub);
      if (interest.isEmpty()) this.exact.delete(sub.subject);
      return;
    }
    this.wildcards--;
    removeFromTrie(this.root, sub.subject.split('.'), 0, sub);
  }

  /** Appends every receiver of `subject` to `out`; returns how many. */
  collect(subject: string, out: MemSub[]): number {
    const before = out.length;
    let groups: Groups | undefined;
    const interest = this.exact.get(subject);
    if (interest !== undefined) groups = interest.collect(out, groups);
    if (this.wildcards > 0) groups = collectFromTrie(this.root, subject.split('.'), 0, out, groups);
    if (groups !== undefined) {
      for (const [queue, members] of groups) out.push(this.pick(queue, members));
    }
    return out.length - before;
  }

  private pick(queue: string, members: MemSub[]): MemSub {
    const q = this.queues.get(queue);
    const i = q === undefined ? 0 : q.next++ % members.length;
    if (q !== undefined && q.next >= 0x40000000) q.next = 0;
    return members[i] as MemSub;
  }

  clear(): void {
    this.exact.clear();
    this.root.literal = undefined;
    this.root.star = undefined;
    this.root.rest = undefined;
    this.root.here = undefined;
    this.wildcards = 0;
    this.queues.clear();
  }
}

function collectFromTrie(node: TrieNode, tokens: string[], i: number, out: MemSub[], groups: Groups | undefined): Groups | undefined {
  if (i === tokens.length) return node.here === undefined ? groups : node.here.collect(out, groups);
  if (node.rest !== undefined) groups = node.rest.collect(out, groups);
  const child = node.literal?.get(tokens[i] as string);
  if (child !== undefined) groups = collectFromTrie(child, tokens, i + 1, out, groups);
  if (node.star !== undefined) groups = collectFromTrie(node.star, tokens, i + 1, out, groups);
  return groups;
}

/** Removes `sub` below `node`; prunes children that became empty. */
function removeFromTrie(node: TrieNode, tokens: string[], i: number, sub: MemSub): void {
  const t = tokens[i] as string;
  if (i === tokens.length) {
    node.here?.remove(sub);
    if (node.here?.isEmpty()) node.here = undefined;
    return;
  }
  if (t === '>') {
    node.rest?.remove(sub);
    if (node.rest?.isEmpty()) node.rest = undefined;
    return;
  }
  const child = t === '*' ? node.star : node.literal?.get(t);
  if (child === undefined) return;
  removeFromTrie(child, tokens, i + 1, sub);
  if (!child.isEmpty()) return;
  if (t === '*') node.star = undefined;
  else node.literal?.delete(t);
}
