/** The status bar item: "sqlnb: <active connection>". */
import { Widget } from '@lumino/widgets';
import { SqlnbModel } from './model';

export class SqlnbStatus extends Widget {
  constructor(model: SqlnbModel, onClick: () => void) {
    super();
    this._model = model;
    this.addClass('sqlnb-statusbar');
    this.node.title = 'sqlnb: the active connection of the current notebook (click to open the panel)';
    this.node.addEventListener('click', onClick);
    model.currentConnectionChanged.connect(this._update, this);
    this._update();
  }

  get isActive(): boolean {
    return this._model.current !== null;
  }

  private _update(): void {
    const chat = this._model.current;
    const active = chat && chat.isReady ? chat.active : null;
    this.node.textContent = `sqlnb: ${active ?? 'no connection'}`;
  }

  private _model: SqlnbModel;
}
