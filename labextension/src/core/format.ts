/**
 * How the panel writes values and times (plain TypeScript, unit-tested under node).
 */

/** A result value as text: NULL, JSON for objects, else as it came. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) {
    return 'NULL';
  }
  if (typeof v === 'object') {
    return JSON.stringify(v);
  }
  return String(v);
}

/**
 * A value as the result table shows it: a number with a long fraction rounded (two
 * decimals, or three significant digits below 1), the full value kept for the tooltip and
 * for Copy; whole numbers (ids, years) as they are.
 */
export function displayText(v: unknown): { text: string; full: string | null } {
  const full = cellText(v);
  let n: number | null = null;
  if (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v)) {
    n = v;
  } else if (typeof v === 'string' && /^-?\d+\.\d{3,}$/.test(v)) {
    n = Number(v); // a decimal the kernel sent as text
  }
  if (n === null || !Number.isFinite(n)) {
    return { text: full, full: null };
  }
  const text =
    Math.abs(n) >= 1
      ? n.toLocaleString('en-US', { maximumFractionDigits: 2, useGrouping: false })
      : n.toLocaleString('en-US', { maximumSignificantDigits: 3, useGrouping: false });
  return text === full ? { text, full: null } : { text, full };
}

/** Seconds since `since` (a `Date.now()`), as the live line shows them: "7 s", "1 min 5 s". */
export function elapsedText(since: number | undefined, now = Date.now()): string {
  if (since === undefined || !Number.isFinite(since)) {
    return '';
  }
  const s = Math.max(0, Math.floor((now - since) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
