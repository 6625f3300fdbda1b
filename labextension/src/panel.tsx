/**
 * The sidebar: a ReactWidget that draws the current notebook's NotebookChat with the
 * components of components/ (sidebar.tsx puts them together). The class names are the
 * contract the browser tests rely on.
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import React, { createRef } from 'react';
import { IPanelServices, ServicesContext } from './components/context';
import type { IQuestionBox } from './components/question-box';
import { Sidebar } from './components/sidebar';
import type { SqlnbModel } from './model';
import type { ModelServerStatus } from './modelserver';

export interface IChatPanelOptions {
  model: SqlnbModel;
  /** draws charts; null: none */
  rendermime?: IRenderMimeRegistry | null;
  /** highlights SQL; null: plain text */
  languages?: IEditorLanguageRegistry | null;
  /** the local model the Jupyter server shares; null: not followed */
  modelServer?: ModelServerStatus | null;
}

export class ChatPanel extends ReactWidget {
  constructor(options: IChatPanelOptions) {
    super();
    this._model = options.model;
    this._modelServer = options.modelServer ?? null;
    this._services = {
      rendermime: options.rendermime ?? null,
      languages: options.languages ?? null,
      panelWidth: () => this.node.clientWidth
    };
    this.id = 'sqlnb-chat-panel';
    this.addClass('sqlnb-panel');
    // the name the README and the command palette use
    this.title.caption = 'Ask sqlnb';
    this.title.label = 'Ask sqlnb';
  }

  /** Put the keyboard in the question box (the open command). */
  focusInput(): void {
    this._questionBox.current?.focus();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._model.current?.activate();
    void this._modelServer?.refresh();
  }

  render(): JSX.Element {
    return (
      <ServicesContext.Provider value={this._services}>
        <Sidebar
          model={this._model}
          modelServer={this._modelServer}
          isVisible={this._isVisible}
          questionBox={this._questionBox}
        />
      </ServicesContext.Provider>
    );
  }

  private _isVisible = () => this.isVisible;
  private _model: SqlnbModel;
  private _modelServer: ModelServerStatus | null;
  private _services: IPanelServices;
  private _questionBox = createRef<IQuestionBox>();
}
