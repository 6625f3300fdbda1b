/** An answer's confidence badge: the level, its reasons on hover and on expand. */
import React from 'react';
import {
  confidenceAriaLabel,
  confidenceLabel,
  confidenceReasons,
  confidenceTooltip
} from '../core/confidence';
import type { Confidence } from '../core/protocol';

export function ConfidenceBadge(props: { confidence: Confidence }): JSX.Element {
  const c = props.confidence;
  const label = confidenceLabel(c);
  const reasons = confidenceReasons(c);
  if (!reasons.length) {
    return (
      <span
        className="sqlnb-confidence sqlnb-confidence-badge"
        data-level={c.level}
        role="note"
        aria-label={confidenceAriaLabel(c)}
        title={confidenceTooltip(c)}
      >
        {label}
      </span>
    );
  }
  // open or folded as the reader left it (React leaves `open` alone once drawn)
  return (
    <details className="sqlnb-confidence" data-level={c.level}>
      <summary
        className="sqlnb-confidence-badge"
        aria-label={confidenceAriaLabel(c)}
        title={confidenceTooltip(c)}
      >
        {label}
      </summary>
      <ul className="sqlnb-confidence-reasons">
        {reasons.map((r, i) => (
          <li key={i} className="sqlnb-confidence-reason">
            {r}
          </li>
        ))}
      </ul>
    </details>
  );
}
