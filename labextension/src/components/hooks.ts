/**
 * Subscribing a component to a model's signal: the component draws again when the signal
 * fires (for the arguments `accept` takes), and once as it subscribes, so that what changed
 * between its first drawing and its subscription is drawn too.
 */
import type { ISignal } from '@lumino/signaling';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';

/**
 * Redraw the calling component each time `signal` fires with arguments `accept` takes
 * (all, without `accept`). Returns how many times it did (a value that changes with it).
 */
export function useSignal<T, U>(
  signal: ISignal<T, U> | null | undefined,
  accept?: (args: U) => boolean
): number {
  const [count, setCount] = useState(0);
  const filter = useRef(accept);
  filter.current = accept;
  useEffect(() => {
    if (!signal) {
      return;
    }
    const slot = (_: T, args: U) => {
      if (!filter.current || filter.current(args)) {
        setCount(n => n + 1);
      }
    };
    signal.connect(slot);
    // an emission between the render and this subscription (a reply that came in first) is
    // not lost: draw once more with what is current now
    setCount(n => n + 1);
    return () => {
      signal.disconnect(slot);
    };
  }, [signal]);
  return count;
}

/** Redraw the calling component every `ms` milliseconds while `on` (a clock). */
export function useTicker(on: boolean, ms = 1000): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!on) {
      return;
    }
    const timer = setInterval(() => setTick(n => n + 1), ms);
    return () => clearInterval(timer);
  }, [on, ms]);
}

/**
 * useLayoutEffect in the page (scrolling before the browser paints); useEffect where there
 * is no document (a view drawn as HTML in the unit tests, where neither runs).
 */
export const useBeforePaint = typeof document === 'undefined' ? useEffect : useLayoutEffect;
