/** A query's result rows as a table: NULLs marked, long fractions rounded (full value on hover). */
import React from 'react';
import { cellText, displayText } from '../core/format';

export function ResultTable(props: {
  columns: ReadonlyArray<string>;
  rows: ReadonlyArray<ReadonlyArray<unknown>>;
  /** round long fractions (the answer's rows); else values as they came */
  round?: boolean;
}): JSX.Element {
  const { columns, rows, round } = props;
  return (
    <div className="sqlnb-result-wrap">
      <table className="sqlnb-result">
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, ri) => (
            <tr key={ri}>
              {columns.map((_, i) => {
                const v = r[i];
                if (!round) {
                  return (
                    <td key={i} className={v === null ? 'sqlnb-null' : undefined}>
                      {cellText(v)}
                    </td>
                  );
                }
                const shown = displayText(v);
                const cls = [v === null ? 'sqlnb-null' : '', shown.full !== null ? 'sqlnb-rounded' : '']
                  .filter(Boolean)
                  .join(' ');
                return (
                  // a rounded value: the value as the database gave it on hover
                  <td key={i} className={cls || undefined} title={shown.full ?? undefined}>
                    {shown.text}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
