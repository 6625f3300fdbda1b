/**
 * What the panel's components share: JupyterLab's services (the chart renderer, the
 * editor languages that highlight SQL), the panel's width, and the conversation's scroller.
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { createContext } from 'react';

export interface IPanelServices {
  /** draws charts (Vega-Lite); null: no charts */
  rendermime: IRenderMimeRegistry | null;
  /** JupyterLab's CodeMirror languages, which highlight SQL; null: plain text */
  languages: IEditorLanguageRegistry | null;
  /** the panel's width in pixels (a chart is drawn as wide) */
  panelWidth: () => number;
}

export const ServicesContext = createContext<IPanelServices>({
  rendermime: null,
  languages: null,
  panelWidth: () => 300
});

/** The conversation's scrolling: to its end (a turn or the live line grew). */
export interface IScroller {
  down(): void;
}

export const ScrollContext = createContext<IScroller>({ down: () => undefined });
