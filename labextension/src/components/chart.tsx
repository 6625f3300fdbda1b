/** An answer's chart, drawn by JupyterLab's own Vega-Lite renderer, as wide as the panel. */
import { MimeModel } from '@jupyterlab/rendermime';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import React, { useContext, useEffect, useRef, useState } from 'react';
import { ServicesContext } from './context';

/** The MIME type of a chart (JupyterLab draws Vega-Lite itself). */
export const CHART_MIME = 'application/vnd.vegalite.v5+json';

export function Chart(props: { spec: Record<string, unknown> }): JSX.Element | null {
  const { spec } = props;
  const { rendermime, panelWidth } = useContext(ServicesContext);
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const node = host.current;
    if (!rendermime || !node) {
      return;
    }
    const renderer = rendermime.createRenderer(CHART_MIME);
    const sized = {
      ...spec,
      width: Math.max(160, panelWidth() - 60),
      autosize: { type: 'fit', contains: 'padding' }
    } as ReadonlyPartialJSONObject;
    node.appendChild(renderer.node);
    void renderer.renderModel(new MimeModel({ data: { [CHART_MIME]: sized } })).catch(() => setFailed(true));
    return () => renderer.dispose();
  }, [spec, rendermime, panelWidth]);
  if (!rendermime?.mimeTypes.includes(CHART_MIME)) {
    return null;
  }
  return (
    <details className="sqlnb-chart" open>
      <summary className="sqlnb-muted">Chart</summary>
      {/* the renderer's node goes here; React draws nothing inside */}
      <div className="sqlnb-chart-view" ref={host} />
      {failed ? <div className="sqlnb-muted">The chart could not be drawn.</div> : null}
    </details>
  );
}
