/**
 * The panel's model: one NotebookChat per open notebook (its conversation,
 * connections, schema and kernel bridge) and the SqlnbModel that follows the
 * current notebook and routes kernel messages to the right notebook.
 */
import { Kernel } from '@jupyterlab/services';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import { BridgeState, IRunEventArgs, KernelBridge } from './bridge';
import {
  Conversation,
  deserializeChat,
  isFinished,
  rememberFields,
  selectHistory,
  serializeChat,
  Turn
} from './core/conversation';
import {
  AskData,
  ConnectionInfo,
  ConnectionsData,
  RowsData,
  describeError,
  ErrorInfo,
  hasFeature,
  InsertCellMessage,
  RememberData,
  RequestError,
  RunEvent,
  SchemaData,
  withHint
} from './core/protocol';

export interface ISqlnbSettings {
  autoInsert: boolean;
  autoRun: boolean;
  maxIterations: number;
  model: string;
  rowsShown: number;
  /** maxIterations was set by the user (else the kernel's AskMagic.max_iterations applies) */
  maxIterationsSet?: boolean;
}

export const DEFAULT_SETTINGS: ISqlnbSettings = {
  autoInsert: false,
  autoRun: false,
  maxIterations: 5,
  model: '',
  rowsShown: 10
};

export interface IBanner {
  text: string;
  error: boolean;
  /** a button offered next to the text */
  action?: 'retry' | 'use_here';
}

function asError(e: unknown): ErrorInfo {
  if (e instanceof RequestError) {
    return e.info;
  }
  return { kind: 'error', message: e instanceof Error ? e.message : String(e) };
}

/** The state of the panel for one notebook. */
export class NotebookChat {
  constructor(panel: NotebookPanel, owner: SqlnbModel) {
    this.panel = panel;
    this._owner = owner;
    this.conversation.onChange(turn => this._onTurn(turn));
    panel.sessionContext.kernelChanged.connect(this._onKernelChanged, this);
    panel.sessionContext.statusChanged.connect(this._onSessionStatus, this);
    NotebookActions.executed.connect(this._onExecuted, this);
    panel.context.pathChanged.connect(() => this._changed.emit());
    void panel.context.ready.then(() => {
      if (this._disposed) {
        return;
      }
      const meta = panel.model?.getMetadata('sqlnb') as { chat?: unknown } | undefined;
      const turns = deserializeChat(meta?.chat);
      if (turns.length && this.conversation.turns.length === 0) {
        this.conversation.reset(turns);
      }
    });
    void panel.sessionContext.ready.then(() => this._attachKernel());
  }

  readonly panel: NotebookPanel;
  readonly conversation = new Conversation();
  connections: ConnectionInfo[] = [];
  active: string | null = null;
  schema: SchemaData | null = null;
  schemaLoading = false;
  schemaError: string | null = null;
  /** text of the question box while another notebook is shown */
  draft = '';
  /** the last message about something the user did (cleared on success) */
  notice: IBanner | null = null;

  get bridge(): KernelBridge | null {
    return this._bridge;
  }

  /** Something other than a single turn changed (connections, schema, banner). */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** One turn changed (null: all of them). */
  get turnChanged(): ISignal<this, Turn | null> {
    return this._turnChanged;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The notebook's file name (the panel shows it; the full path is its tooltip). */
  get title(): string {
    return this.panel.context.path.split('/').pop() || this.panel.context.path;
  }

  get path(): string {
    return this.panel.context.path;
  }

  /** The status line shown by the panel. */
  get banner(): IBanner {
    const base = this._baseBanner();
    if (this.notice) {
      return { ...this.notice, action: this.notice.action ?? base.action };
    }
    return base;
  }

  private _baseBanner(): IBanner {
    const kernel = this.panel.sessionContext.session?.kernel;
    if (!kernel) {
      const status = this.panel.sessionContext.kernelDisplayStatus;
      if (status === 'initializing' || status === 'starting') {
        return { text: 'Starting the kernel…', error: false };
      }
      return {
        text: 'This notebook has no kernel: select a Python kernel to ask sqlnb.',
        error: true
      };
    }
    const bridge = this._bridge;
    if (!bridge) {
      return { text: 'Connecting to the kernel…', error: false };
    }
    const msg = bridge.message;
    const text = msg ? withHint(msg.message, msg.hint) : '';
    switch (bridge.state) {
      case 'ready':
        if (!this.connections.length) {
          return {
            text: this.reconnectable.length
              ? 'The kernel restarted: its database connections are gone. Reconnect below.'
              : 'No database connection in this kernel yet: connect below, or run %sqlnb connect URL --name NAME in a cell.',
            error: false
          };
        }
        return { text: `Connected: ${this.active ?? 'no active connection'}`, error: false };
      case 'idle':
      case 'absent':
      case 'connecting':
        if (kernel.status === 'busy') {
          return {
            text: 'Connecting to sqlnb in the kernel… (waiting for the running cell to finish)',
            error: false
          };
        }
        return { text: 'Connecting to sqlnb in the kernel…', error: false };
      case 'loading':
      case 'restarting':
        return { text, error: false };
      case 'closed':
        return { text, error: false, action: 'retry' };
      case 'superseded':
        return { text, error: true, action: 'use_here' };
      default:
        return { text, error: true, action: 'retry' };
    }
  }

  get isReady(): boolean {
    return this._bridge?.state === 'ready';
  }

  get running(): Turn | null {
    return this.conversation.running;
  }

  setNotice(notice: IBanner | null): void {
    this.notice = notice;
    this._changed.emit();
  }

  /**
   * The panel shows this notebook: connect, loading sqlnb into the kernel
   * when needed (a hidden panel only probes, see KernelBridge.probe).
   */
  activate(): void {
    this._active = true;
    const bridge = this._bridge;
    if (bridge && ['idle', 'absent', 'closed'].includes(bridge.state)) {
      void bridge.open().catch(() => undefined);
    }
  }

  /** Reconnect after a state that needs the user (retry / use here). */
  async reconnect(): Promise<void> {
    this.setNotice(null);
    if (!this._bridge) {
      this._attachKernel();
      return;
    }
    try {
      await this._bridge.open(true);
    } catch {
      // the banner shows the bridge's message
    }
  }

  async refreshConnections(): Promise<void> {
    const bridge = this._bridge;
    if (!bridge || bridge.state !== 'ready') {
      return;
    }
    try {
      const data: ConnectionsData = await bridge.request('connections');
      this._setConnections(data);
    } catch (e) {
      if (bridge.state === 'ready') {
        this.setNotice({ text: describeError(asError(e)), error: true });
      }
    }
  }

  /**
   * Open a connection in the kernel (the panel's connect form, Reconnect after a restart):
   * `target` a URL or a configured connection's name; `password` for a URL without one
   * (sent to the kernel once, never kept here). Resolves to an error text, or null.
   */
  async connect(target: string, options: { name?: string; password?: string } = {}): Promise<string | null> {
    const bridge = this._bridge;
    if (!bridge || bridge.state !== 'ready') {
      return 'The kernel is not ready yet: wait a moment and try again.';
    }
    try {
      const data: ConnectionsData = await bridge.request('connect', {
        target,
        ...(options.name ? { name: options.name } : {}),
        ...(options.password ? { password: options.password } : {})
      });
      this.notice = null;
      this._setConnections(data);
      return null;
    } catch (e) {
      return describeError(asError(e));
    }
  }

  /**
   * What Reconnect offers after a kernel restart: the connections the kernel had, each
   * with how to open it again (`target`: its configured name, or its URL when that holds
   * no password; null: the URL needs its password typed again).
   */
  get reconnectable(): { name: string; url: string; target: string | null }[] {
    if (this.connections.length || !this._lost) {
      return [];
    }
    return this._lastConnections.map(c => ({
      name: c.name,
      url: c.url,
      target: this.known.includes(c.name) ? c.name : c.url.includes('***') ? null : c.url
    }));
  }

  /** The configured connections' names (the connect form offers them). */
  known: string[] = [];

  async useConnection(name: string): Promise<void> {
    const bridge = this._bridge;
    if (!bridge) {
      return;
    }
    try {
      const data: ConnectionsData = await bridge.request('use', { name });
      this.notice = null;
      this._setConnections(data);
    } catch (e) {
      this.setNotice({ text: describeError(asError(e)), error: true });
      this._changed.emit();
    }
  }

  async loadSchema(refresh = false): Promise<void> {
    const bridge = this._bridge;
    const connection = this.active;
    if (!bridge || bridge.state !== 'ready' || !connection) {
      this.schema = null;
      this._changed.emit();
      return;
    }
    this.schemaLoading = true;
    this.schemaError = null;
    this._changed.emit();
    try {
      const data: SchemaData = await bridge.request('schema', { connection, refresh });
      if (this.active === connection) {
        this.schema = data;
      }
    } catch (e) {
      this.schemaError = describeError(asError(e));
    } finally {
      this.schemaLoading = false;
      this._changed.emit();
    }
  }

  /**
   * Ask a question. Resolves once the kernel accepted it (the run streams
   * afterwards); rejects, with nothing left in the conversation, when it did
   * not start (the panel puts the question back into the box).
   */
  async ask(question: string, followUp = false): Promise<void> {
    if (this.running) {
      throw new RequestError({
        kind: 'busy',
        message: 'A question is still being answered; wait for it or press Stop.'
      });
    }
    const bridge = this._bridge;
    if (!bridge) {
      throw new RequestError({ kind: 'no_kernel', message: this.banner.text });
    }
    const settings = this._owner.settings;
    const history = selectHistory(this.conversation.turns, this.active);
    const turn = this.conversation.start(question, this.active, followUp);
    this.setNotice(null);
    try {
      const data: AskData = await bridge.request('ask', {
        question,
        ...(this.active ? { connection: this.active } : {}),
        ...(settings.model ? { model: settings.model } : {}),
        ...(settings.maxIterationsSet ? { max_iterations: settings.maxIterations } : {}),
        rows: settings.rowsShown,
        new: this._newNext,
        history
      });
      this._newNext = false;
      const run = String(data.run);
      this._owner.registerRun(run, this);
      this.conversation.bindRun(turn.id, run);
      // saved at once: a page reloaded mid-answer shows the question as interrupted
      this._save();
      this._owner.flushRun(run);
    } catch (e) {
      this.conversation.remove(turn.id);
      throw e;
    }
  }

  /**
   * More of an answer's result rows, from the result the kernel keeps with its run. Resolves
   * to an error text, or null. An answer from before a kernel restart has no rows there.
   */
  async loadMoreRows(turnId: string, limit = ROWS_PAGE): Promise<string | null> {
    const turn = this.conversation.find(turnId);
    const bridge = this._bridge;
    if (!turn) {
      return null;
    }
    if (!turn.run || !bridge || bridge.state !== 'ready') {
      return 'The kernel no longer has this result: insert the cell and run it to see every row.';
    }
    try {
      const data: RowsData = await bridge.request('rows', { run: turn.run, offset: turn.rows.length, limit });
      this.conversation.addRows(turnId, data.offset, data.rows, data.row_count);
      return null;
    } catch (e) {
      const info = asError(e);
      return info.kind === 'UsageError'
        ? 'The kernel no longer has this result: insert the cell and run it to see every row.'
        : describeError(info);
    }
  }

  async stop(): Promise<void> {
    const turn = this.running;
    if (!turn || !turn.run || !this._bridge) {
      return;
    }
    try {
      await this._bridge.request('stop', { run: turn.run });
    } catch {
      // the run already ended, or the kernel is gone (its turn fails then)
    }
  }

  /**
   * The thumbs-up: store the answer's question and SQL in the kernel's memory store.
   * Idempotent: a turn remembered (or being remembered) is not sent again. The
   * remembered state is saved with the chat.
   */
  async remember(turnId: string): Promise<void> {
    const conv = this.conversation;
    const turn = conv.find(turnId);
    const fields = turn ? rememberFields(turn) : null;
    if (!turn || !fields || turn.remembered !== null || turn.remembering) {
      return;
    }
    const bridge = this._bridge;
    if (!bridge || bridge.state !== 'ready') {
      conv.setRemember(turnId, {
        rememberError: 'The kernel is not connected to sqlnb; connect it, then press the thumbs-up again.'
      });
      return;
    }
    if (bridge.hello && !hasFeature(bridge.hello, 'remember')) {
      conv.setRemember(turnId, {
        rememberError:
          "This kernel's sqlnb cannot remember answers. Install the same sqlnb version in the kernel environment and in JupyterLab, then restart the kernel."
      });
      return;
    }
    conv.setRemember(turnId, { remembering: true, rememberError: null });
    try {
      const data: RememberData = await bridge.request('remember', fields);
      const id = typeof data.id === 'number' ? data.id : Number(data.id);
      conv.setRemember(turnId, { remembering: false, remembered: Number.isFinite(id) ? id : 0 });
      this._save();
    } catch (e) {
      conv.setRemember(turnId, { remembering: false, rememberError: describeError(asError(e)) });
    }
  }

  /**
   * Take the turn's `index`-th other reading as its answer and insert its cell at the end
   * of the notebook; saved with the chat (the thumbs-up then remembers this reading).
   */
  async useAlternative(turnId: string, index: number): Promise<boolean> {
    const turn = this.conversation.find(turnId);
    const alt = turn?.alternatives[index];
    if (!turn || !alt) {
      return false;
    }
    this.conversation.pickAlternative(turnId, index);
    this._save();
    return this.insertCell(alt.cell ?? alt.sql, false, { end: true, focus: true });
  }

  /** Forget the conversation; the next question starts a new one in the kernel. */
  clear(): void {
    if (this.running) {
      return;
    }
    this._newNext = true;
    this.conversation.reset([]);
    this._save();
  }

  /** A run event of this notebook's conversation. */
  handleEvent(run: string, event: RunEvent): void {
    this.conversation.applyEvent(run, event, this._owner.settings.rowsShown);
    if (event.type === 'done' && typeof event.stats_label === 'string' && event.stats_label) {
      this._stats = event.stats_label;
      this._changed.emit();
    }
  }

  /** The kernel session's questions so far, in the kernel's words (null: none asked yet). */
  get stats(): string | null {
    return this._stats;
  }

  /**
   * Insert `source` as a code cell of this notebook, as one undo step; optionally run it.
   * Where: below the cell `below` (the `%%ask` cell a question came from), else at the end
   * (`end`: a question asked in the panel), else below the active cell. The new cell is
   * then the active one; with `focus` the notebook takes the keyboard (command mode), so
   * Shift+Enter runs the new cell.
   */
  async insertCell(
    source: string,
    run: boolean,
    where: { below?: string | null; end?: boolean; focus?: boolean } = {}
  ): Promise<boolean> {
    const panel = this.panel;
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
      this._owner.focusNotebook(panel);
      notebook.activeCell?.node.scrollIntoView({ block: 'nearest' });
    }
    if (run) {
      await NotebookActions.run(notebook, panel.sessionContext);
    }
    return true;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    NotebookActions.executed.disconnect(this._onExecuted, this);
    Signal.clearData(this);
  }

  private _onTurn(turn: Turn | null): void {
    this._turnChanged.emit(turn);
    if (turn === null) {
      return;
    }
    if (isFinished(turn) && this.panel.isDisposed) {
      // the notebook was closed while this answer was coming: nothing left to show it in
      if (turn.run) {
        this._owner.forgetRun(turn.run);
      }
      if (!this.running) {
        this.dispose();
      }
      return;
    }
    if (isFinished(turn) && !this._saved.has(turn.id + turn.status)) {
      this._saved.add(turn.id + turn.status);
      if (this.notice && !this.notice.error) {
        // e.g. "still being answered": no longer true
        this.setNotice(null);
      }
      this._save();
      if (turn.run) {
        this._owner.forgetRun(turn.run);
      }
      const s = this._owner.settings;
      if (turn.status === 'success' && turn.cell && turn.run && (s.autoInsert || s.autoRun)) {
        void this.insertCell(turn.cell, s.autoRun, { end: true });
      }
      if (turn.status === 'success') {
        // a query may have changed what the kernel knows (connections)
        void this.refreshConnections();
      }
    }
  }

  private _save(): void {
    const model = this.panel.model;
    if (!model || this.panel.isDisposed) {
      return;
    }
    const prev = (model.getMetadata('sqlnb') as Record<string, unknown> | undefined) ?? {};
    model.setMetadata('sqlnb', {
      ...prev,
      chat: serializeChat(this.conversation.turns, this._owner.settings.rowsShown)
    });
  }

  private _attachKernel(): void {
    if (this._disposed) {
      return;
    }
    const kernel = this.panel.sessionContext.session?.kernel ?? null;
    const bridge = kernel ? this._owner.bridgeFor(kernel, () => this.panel.context.path) : null;
    if (bridge === this._bridge) {
      this._changed.emit();
      return;
    }
    if (this._bridge) {
      this._bridge.stateChanged.disconnect(this._onBridgeState, this);
    }
    this.conversation.fail({
      kind: 'kernel_changed',
      message: "The notebook's kernel changed before this answer arrived."
    });
    this._bridge = bridge;
    this.connections = [];
    this.active = null;
    this.schema = null;
    if (bridge) {
      bridge.stateChanged.connect(this._onBridgeState, this);
      if (bridge.state === 'ready') {
        this._onBridgeState(bridge, 'ready');
      } else if (this._active) {
        void bridge.open().catch(() => undefined);
      } else {
        void bridge.probe();
      }
    }
    this._changed.emit();
  }

  private _onKernelChanged(): void {
    this._attachKernel();
  }

  private _onSessionStatus(): void {
    this._changed.emit();
  }

  private _onExecuted(
    _: unknown,
    args: { notebook: unknown; cell: { model: { sharedModel: { getSource(): string } } } }
  ): void {
    if (args.notebook !== this.panel.content) {
      return;
    }
    if (this.isReady && !this.running) {
      void this.refreshConnections();
    } else if (
      this._bridge?.state === 'absent' &&
      /sqlnb|%%ask/.test(args.cell.model.sharedModel.getSource())
    ) {
      // e.g. %load_ext sqlnb just ran
      void this._bridge.probe();
    }
  }

  private _onBridgeState(bridge: KernelBridge, state: BridgeState): void {
    if (state === 'ready') {
      this.notice = null;
      const hello = bridge.hello;
      if (hello) {
        this._setConnections(hello);
      } else {
        void this.refreshConnections();
      }
    } else if (!['idle', 'connecting', 'loading'].includes(state)) {
      // restarted, dead, closed, superseded, ...: no more events can come for a run, and
      // the kernel session whose questions the footer counted is over
      this._stats = null;
      this._lost = this._lastConnections.length > 0;
      const info = bridge.message ?? { kind: state, message: 'The kernel connection was lost.' };
      this.conversation.fail({
        kind: info.kind,
        message: `${info.message} The question was not answered; ask it again.`
      });
      this.schema = null;
    }
    this._changed.emit();
  }

  private _setConnections(data: ConnectionsData): void {
    const before = this.active;
    this.connections = Array.isArray(data.connections) ? data.connections : [];
    if (Array.isArray(data.known)) {
      this.known = data.known.filter(k => typeof k === 'string');
    }
    if (this.connections.length) {
      // what Reconnect offers once a restart took them (names and redacted URLs only)
      this._lastConnections = this.connections.map(c => ({ name: c.name, url: c.url }));
      this._lost = false;
    }
    this.active = data.active ?? this.connections.find(c => c.active)?.name ?? null;
    this._changed.emit();
    if (this.active !== before || !this.schema) {
      this.schema = null;
      void this.loadSchema();
    }
  }

  private _owner: SqlnbModel;
  private _bridge: KernelBridge | null = null;
  private _newNext = false;
  private _active = false;
  private _saved = new Set<string>();
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
  private _stats: string | null = null;
  private _lastConnections: { name: string; url: string }[] = [];
  /** the kernel went away (restart, death) while it had connections */
  private _lost = false;
  private _turnChanged = new Signal<this, Turn | null>(this);
}

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

/** Rows fetched per "Show more rows" (the kernel gives at most 1,000 a request). */
export const ROWS_PAGE = 200;

/** All notebooks' chats, the current one, kernel bridges and run routing. */
export class SqlnbModel {
  constructor(tracker: INotebookTracker) {
    this._tracker = tracker;
    tracker.widgetAdded.connect((_, panel) => this._chatFor(panel));
    tracker.currentChanged.connect(this._onCurrentChanged, this);
    tracker.forEach(panel => this._chatFor(panel));
    this._onCurrentChanged();
  }

  settings: ISqlnbSettings = { ...DEFAULT_SETTINGS };

  /** Give a notebook the keyboard (the app sets it: its shell activates the panel). */
  focusNotebook: (panel: NotebookPanel) => void = panel => panel.content.activate();

  get current(): NotebookChat | null {
    return this._current;
  }

  /** The current notebook changed (or its chat's state did, for the status bar). */
  get currentChanged(): ISignal<this, NotebookChat | null> {
    return this._currentChanged;
  }

  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
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
    this.settings = { ...DEFAULT_SETTINGS, ...settings };
    this._stateChanged.emit();
  }

  private _chatFor(panel: NotebookPanel): NotebookChat {
    let chat = this._chats.get(panel);
    if (!chat) {
      const c = new NotebookChat(panel, this);
      chat = c;
      this._chats.set(panel, c);
      c.changed.connect(() => {
        if (this._current === c) {
          this._stateChanged.emit();
        }
      });
      panel.disposed.connect(() => {
        this._chats.delete(panel);
        // a run still going keeps its chat until its done event
        if (!c.running) {
          c.dispose();
        }
        if (this._current === c) {
          this._current = null;
          this._currentChanged.emit(null);
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
      this._stateChanged.emit();
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
  private _chats = new Map<NotebookPanel, NotebookChat>();
  private _bridges = new Map<string, KernelBridge>();
  private _runs = new Map<string, NotebookChat>();
  private _buffered = new Map<string, RunEvent[]>();
  private _current: NotebookChat | null = null;
  private _currentChanged = new Signal<this, NotebookChat | null>(this);
  private _stateChanged = new Signal<this, void>(this);
}
