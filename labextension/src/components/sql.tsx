/**
 * SQL as the panel shows it: highlighted by JupyterLab's own CodeMirror SQL language (the
 * editor's colours); plain text until that is done, and where JupyterLab has no registry.
 */
import React, { useContext, useLayoutEffect, useRef } from 'react';
import { ServicesContext } from './context';

export function SqlBlock(props: { sql: string; className?: string }): JSX.Element {
  const { sql, className = 'sqlnb-sql' } = props;
  const { languages } = useContext(ServicesContext);
  const ref = useRef<HTMLPreElement>(null);
  useLayoutEffect(() => {
    const pre = ref.current;
    if (!pre) {
      return;
    }
    // the text at once; React draws no children here, the highlighted spans replace it
    pre.textContent = sql;
    const language = languages ? (languages.findByMIME('text/x-sql') ?? languages.findBest('sql')) : null;
    if (!languages || !language) {
      return;
    }
    let current = true;
    const out = document.createElement('div');
    languages
      .highlight(sql, language, out)
      .then(() => {
        // the same text, in spans: swapped in whole
        if (current && out.textContent === sql) {
          pre.replaceChildren(...Array.from(out.childNodes));
        }
      })
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [sql, languages]);
  return <pre ref={ref} className={className} />;
}
