/**
 * The panel's model: one NotebookChat (chat.ts) per open notebook, the current one, the
 * kernel bridges, and the routing of kernel messages to the notebook that asked; and the
 * adapter that gives a NotebookChat its JupyterLab notebook (PanelHost).
 */
import { Kernel } from '@jupyterlab/services';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import { IRunEventArgs, KernelBridge } from './bridge';
import {
  DEFAULT_SETTINGS,
  ICellPlace,
  IChatOwner,
  INotebookHost,
  ISqlnbSettings,
  NotebookChat
} from './chat';
import { InsertCellMessage, RunEvent } from './core/protocol';

function cellIndex(panel: NotebookPanel, cellId: string): number {
  const cells = panel.content.model?.cells;
  if (!cells) {
    return -1;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) {
      return i;
    }
  }
  return -1;
}

/** A JupyterLab notebook as a NotebookChat sees it. */
class PanelHost implements INotebookHost {
  constructor(panel: NotebookPanel, focus: (panel: NotebookPanel) => void) {
    this._panel = panel;
    this._focus = focus;
    NotebookActions.executed.connect(this._onExecuted, this);
    panel.disposed.connect(() => NotebookActions.executed.disconnect(this._onExecuted, this));
  }

  get path(): string {
    return this._panel.context.path;
  }

  get isDisposed(): boolean {
    return this._panel.isDisposed;
  }

  get kernel(): Kernel.IKernelConnection | null {
    return this._panel.sessionContext.session?.kernel ?? null;
  }

  get kernelDisplayStatus(): string {
    return this._panel.sessionContext.kernelDisplayStatus;
  }

  get pathChanged(): ISignal<unknown, unknown> {
    return this._panel.context.pathChanged;
  }

  get kernelChanged(): ISignal<unknown, unknown> {
    return this._panel.sessionContext.kernelChanged;
  }

  get statusChanged(): ISignal<unknown, unknown> {
    return this._panel.sessionContext.statusChanged;
  }

  get cellExecuted(): ISignal<unknown, string> {
    return this._cellExecuted;
  }

  get contextReady(): Promise<void> {
    return this._panel.context.ready;
  }

  get sessionReady(): Promise<void> {
    return this._panel.sessionContext.ready;
  }

  getMetadata(): Record<string, unknown> | undefined {
    return this._panel.model?.getMetadata('sqlnb') as Record<string, unknown> | undefined;
  }

  setMetadata(value: Record<string, unknown>): void {
    this._panel.model?.setMetadata('sqlnb', value);
  }

  /**
   * Insert `source` as a code cell, as one undo step; optionally run it. Where: below the
   * cell `below` (the `%%ask` cell a question came from), else at the end (`end`: a
   * question asked in the panel), else below the active cell. The new cell is then the
   * active one; with `focus` the notebook takes the keyboard (command mode), so
   * Shift+Enter runs the new cell.
   */
  async insertCell(source: string, run: boolean, where: ICellPlace): Promise<boolean> {
    const panel = this._panel;
    const notebook = panel.content;
    const model = notebook.model;
    if (panel.isDisposed || !model) {
      return false;
    }
    let index = where.end ? model.cells.length - 1 : notebook.activeCellIndex;
    if (where.below) {
      const found = cellIndex(panel, where.below);
      if (found >= 0) {
        index = found;
      }
    }
    const at = Math.min(Math.max(index + 1, 0), model.cells.length);
    model.sharedModel.transact(() => {
      model.sharedModel.insertCell(at, { cell_type: 'code', source, metadata: {} });
    });
    notebook.deselectAll();
    notebook.activeCellIndex = at;
    if (where.focus) {
      notebook.mode = 'command';
      this._focus(panel);
      notebook.activeCell?.node.scrollIntoView({ block: 'nearest' });
    }
    if (run) {
      await NotebookActions.run(notebook, panel.sessionContext);
    }
    return true;
  }

  private _onExecuted(
    _: unknown,
    args: { notebook: unknown; cell: { model: { sharedModel: { getSource(): string } } } }
  ): void {
    if (args.notebook === this._panel.content) {
      this._cellExecuted.emit(args.cell.model.sharedModel.getSource());
    }
  }

  private _panel: NotebookPanel;
  private _focus: (panel: NotebookPanel) => void;
  private _cellExecuted = new Signal<this, string>(this);
}

/** All notebooks' chats, the current one, kernel bridges and run routing. */
export class SqlnbModel implements IChatOwner {
  constructor(tracker: INotebookTracker) {
    this._tracker = tracker;
    tracker.widgetAdded.connect((_, panel) => this._chatFor(panel));
    tracker.currentChanged.connect(this._onCurrentChanged, this);
    tracker.forEach(panel => this._chatFor(panel));
    this._onCurrentChanged();
  }

  get settings(): ISqlnbSettings {
    return this._settings;
  }

  /** Give a notebook the keyboard (the app sets it: its shell activates the panel). */
  focusNotebook: (panel: NotebookPanel) => void = panel => panel.content.activate();

  get current(): NotebookChat | null {
    return this._current;
  }

  /** The current notebook changed. */
  get currentChanged(): ISignal<this, NotebookChat | null> {
    return this._currentChanged;
  }

  /** The current notebook's connections or kernel state changed (the status bar). */
  get currentConnectionChanged(): ISignal<this, void> {
    return this._currentConnectionChanged;
  }

  chatOf(panel: NotebookPanel): NotebookChat | null {
    return this._chats.get(panel) ?? null;
  }

  bridgeFor(kernel: Kernel.IKernelConnection, path: () => string): KernelBridge {
    // one bridge per kernel id: a second connection to the same kernel in this page
    // (another notebook on it) cannot handle comms, the first one's bridge serves both
    let bridge = this._bridges.get(kernel.id);
    if (!bridge || bridge.isDisposed || bridge.kernel.isDisposed) {
      bridge = new KernelBridge(kernel, path);
      const b = bridge;
      this._bridges.set(kernel.id, b);
      b.runEvent.connect(this._onRunEvent, this);
      b.insertCell.connect(this._onInsertCell, this);
      kernel.disposed.connect(() => {
        if (this._bridges.get(kernel.id) === b) {
          this._bridges.delete(kernel.id);
        }
      });
    }
    return bridge;
  }

  registerRun(run: string, chat: NotebookChat): void {
    this._runs.set(run, chat);
  }

  forgetRun(run: string): void {
    this._runs.delete(run);
    this._buffered.delete(run);
  }

  /** Replay events that arrived before the ask's reply named their run. */
  flushRun(run: string): void {
    const events = this._buffered.get(run);
    const chat = this._runs.get(run);
    this._buffered.delete(run);
    if (events && chat) {
      for (const e of events) {
        chat.handleEvent(run, e);
      }
    }
  }

  updateSettings(settings: Partial<ISqlnbSettings>): void {
    this._settings = { ...DEFAULT_SETTINGS, ...settings };
  }

  private _chatFor(panel: NotebookPanel): NotebookChat {
    let chat = this._chats.get(panel);
    if (!chat) {
      const c = new NotebookChat(new PanelHost(panel, p => this.focusNotebook(p)), this);
      chat = c;
      this._chats.set(panel, c);
      const forward = () => {
        if (this._current === c) {
          this._currentConnectionChanged.emit();
        }
      };
      c.connectionsChanged.connect(forward);
      c.bannerChanged.connect(forward);
      panel.disposed.connect(() => {
        this._chats.delete(panel);
        // a run still going keeps its chat until its done event
        if (!c.running) {
          c.dispose();
        }
        if (this._current === c) {
          this._current = null;
          this._currentChanged.emit(null);
          this._currentConnectionChanged.emit();
        }
      });
    }
    return chat;
  }

  private _onCurrentChanged(): void {
    const panel = this._tracker.currentWidget;
    const chat = panel ? this._chatFor(panel) : null;
    if (chat !== this._current) {
      this._current = chat;
      this._currentChanged.emit(chat);
      this._currentConnectionChanged.emit();
    }
  }

  private _onRunEvent(_: KernelBridge, args: IRunEventArgs): void {
    const chat = this._runs.get(args.run);
    if (chat) {
      chat.handleEvent(args.run, args.event);
      return;
    }
    // the ask's reply has not arrived yet: keep the events for flushRun
    const list = this._buffered.get(args.run) ?? [];
    list.push(args.event);
    this._buffered.set(args.run, list);
    if (this._buffered.size > 50) {
      const oldest = this._buffered.keys().next().value;
      if (oldest !== undefined) {
        this._buffered.delete(oldest);
      }
    }
  }

  private async _onInsertCell(bridge: KernelBridge, msg: InsertCellMessage): Promise<void> {
    let target: NotebookPanel | null = null;
    if (msg.cell_id) {
      this._tracker.forEach(panel => {
        if (!target && cellIndex(panel, msg.cell_id!) >= 0) {
          target = panel;
        }
      });
    }
    if (!target) {
      // no cell id: the current notebook if it runs on this kernel, else any that does
      const onKernel = (p: NotebookPanel) => p.sessionContext.session?.kernel?.id === bridge.kernel.id;
      const cur = this._tracker.currentWidget;
      if (cur && onKernel(cur)) {
        target = cur;
      } else {
        this._tracker.forEach(p => {
          if (!target && onKernel(p)) {
            target = p;
          }
        });
      }
    }
    if (!target) {
      return;
    }
    const chat = this._chatFor(target);
    const ok = await chat.insertCell(msg.source, msg.run, { below: msg.cell_id });
    if (ok) {
      bridge.notify({ type: 'inserted', cell_id: msg.cell_id });
    }
  }

  private _tracker: INotebookTracker;
  private _settings: ISqlnbSettings = { ...DEFAULT_SETTINGS };
  private _chats = new Map<NotebookPanel, NotebookChat>();
  private _bridges = new Map<string, KernelBridge>();
  private _runs = new Map<string, NotebookChat>();
  private _buffered = new Map<string, RunEvent[]>();
  private _current: NotebookChat | null = null;
  private _currentChanged = new Signal<this, NotebookChat | null>(this);
  private _currentConnectionChanged = new Signal<this, void>(this);
}
