/**
 * An answer's confidence (the `done` event's `confidence`, docs/protocol.md): parsing
 * what the kernel sent and the words the panel shows for it, which are the kernel's
 * (`confidence_labels`, sqlnb.labels) when it sent them.
 *
 * Plain TypeScript, no JupyterLab imports (unit-tested under node).
 */
import { Confidence, ConfidenceLabels, ConfidenceLevel } from './protocol';

const LEVELS: ReadonlyArray<ConfidenceLevel> = ['high', 'medium', 'low'];

/** The badge's words from the kernel (or a saved chat); null for anything else. */
export function parseConfidenceLabels(x: unknown): ConfidenceLabels | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) {
    return null;
  }
  const r = x as Record<string, unknown>;
  const text = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (!text(r.label) || !text(r.aria_label) || !text(r.tooltip) || !Array.isArray(r.reasons)) {
    return null;
  }
  const reasons = r.reasons.filter((s): s is string => typeof s === 'string' && s.trim() !== '');
  return { label: r.label, aria_label: r.aria_label, tooltip: r.tooltip, reasons };
}

/**
 * A confidence from the kernel (or a saved chat); null for anything else. `labels`: the
 * done event's `confidence_labels` (a saved chat keeps them in the confidence).
 */
export function parseConfidence(x: unknown, labels?: unknown): Confidence | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) {
    return null;
  }
  const r = x as Record<string, unknown>;
  const level = typeof r.level === 'string' ? r.level.toLowerCase() : '';
  if (!(LEVELS as string[]).includes(level)) {
    return null;
  }
  const score =
    typeof r.score === 'number' && Number.isFinite(r.score) ? Math.min(1, Math.max(0, r.score)) : null;
  const reasons = Array.isArray(r.reasons)
    ? r.reasons.filter((s): s is string => typeof s === 'string' && s.trim() !== '')
    : [];
  const words = parseConfidenceLabels(labels ?? r.labels);
  return { level: level as ConfidenceLevel, score, reasons, ...(words ? { labels: words } : {}) };
}

/** The reasons as the panel lists them: the kernel's sentences. */
export function confidenceReasons(c: Confidence): string[] {
  return c.labels ? c.labels.reasons : c.reasons.map(reasonText);
}

/** A reason as the panel shows it: the kernel's phrase as a sentence. */
export function reasonText(reason: string): string {
  const t = reason.trim();
  return t ? t[0].toUpperCase() + t.slice(1) : t;
}

/**
 * The badge's text: the kernel's (sqlnb.labels); a confidence without labels (saved by an
 * older panel, or from a kernel without the `labels` feature) gets the same words here.
 */
export function confidenceLabel(c: Confidence): string {
  if (c.labels) {
    return c.labels.label;
  }
  switch (c.level) {
    case 'high':
      return 'High confidence';
    case 'medium':
      return 'Medium confidence';
    default:
      return 'Low confidence — check this answer';
  }
}

/** "0.82" → "82%" (null: no score). */
export function scorePercent(score: number | null): string | null {
  return score === null ? null : `${Math.round(score * 100)}%`;
}

/** The badge's accessible name: the level, the score, and how to read the reasons. */
export function confidenceAriaLabel(c: Confidence): string {
  if (c.labels) {
    return c.labels.aria_label;
  }
  const pct = scorePercent(c.score);
  const n = c.reasons.length;
  const why = n ? `; ${n} reason${n === 1 ? '' : 's'}, expand to read ${n === 1 ? 'it' : 'them'}` : '';
  return `${confidenceLabel(c)}${pct ? ` (score ${pct})` : ''}${why}`;
}

/** The badge's tooltip: the reasons, one a line (or the level alone). */
export function confidenceTooltip(c: Confidence): string {
  if (c.labels) {
    return c.labels.tooltip;
  }
  const pct = scorePercent(c.score);
  const head = `${confidenceLabel(c)}${pct ? ` (${pct})` : ''}`;
  return c.reasons.length ? [head, ...c.reasons.map(r => `• ${reasonText(r)}`)].join('\n') : head;
}
