/**
 * Child abort signals without AbortSignal.any and without a listener per child on the parent.
 * Both matter here: AbortSignal.any and a first listener on a fresh signal each cost several µs
 * per request, and the caller's signal is shared by every parallel branch of an execution (one
 * listener per send would pile up). Each parent gets one listener that fans out to its children.
 */
interface Child {
  controller: AbortController;
  onAbort: (() => void) | undefined;
}

const childrenOf = new WeakMap<AbortSignal, Set<Child>>();

export interface LinkedSignal {
  signal: AbortSignal;
  /** aborts the child alone (the parent is untouched), then runs its onAbort */
  abort(): void;
  /** detaches from the parent; call when the work is over */
  unlink(): void;
}

function abortChild(child: Child): void {
  if (child.controller.signal.aborted) return;
  child.controller.abort();
  child.onAbort?.();
}

/** `onAbort` runs when the child is aborted either way, without an EventTarget listener. */
export function linkSignal(parent: AbortSignal, onAbort?: () => void): LinkedSignal {
  const child: Child = { controller: new AbortController(), onAbort };
  const handle: LinkedSignal = { signal: child.controller.signal, abort: () => abortChild(child), unlink: () => undefined };
  if (parent.aborted) {
    child.controller.abort();
    return handle;
  }
  let set = childrenOf.get(parent);
  if (!set) {
    const fresh = new Set<Child>();
    childrenOf.set(parent, fresh);
    parent.addEventListener(
      'abort',
      () => {
        childrenOf.delete(parent);
        for (const c of fresh) abortChild(c);
      },
      { once: true },
    );
    set = fresh;
  }
  set.add(child);
  const owner = set;
  handle.unlink = () => void owner.delete(child);
  return handle;
}
