/**
 * The panel's state for one notebook: its conversation, the kernel's connections and
 * tables, the status line and the footer, and the actions the panel offers (ask, stop,
 * connect, remember, insert...). State is private behind read-only getters; each kind of
 * change has its own signal, so a view redraws what changed and nothing else (a phase or
 * the model's text, every 0.1 s while it writes, fires `liveChanged` only).
 *
 * The notebook is reached through INotebookHost (model.ts adapts JupyterLab's
 * NotebookPanel to it), so this file runs under node in the unit tests.
 */
import type { Kernel } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import { BridgeState, KernelBridge } from './bridge';
import {
  Conversation,
  ConversationChange,
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
  describeError,
  ErrorInfo,
  hasFeature,
  RememberData,
  RequestError,
  RowsData,
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

/** Rows fetched per "Show more rows" (the kernel gives at most 1,000 a request). */
export const ROWS_PAGE = 200;

export interface IBanner {
  text: string;
  error: boolean;
  /** a button offered next to the text */
  action?: 'retry' | 'use_here';
}

/** Where a cell goes: below the cell `below`, else at the end (`end`), else below the active one. */
export interface ICellPlace {
  below?: string | null;
  end?: boolean;
  /** the notebook takes the keyboard, the new cell active (Shift+Enter runs it) */
  focus?: boolean;
}

/** What a NotebookChat needs of its notebook (model.ts: a JupyterLab NotebookPanel). */
export interface INotebookHost {
  readonly path: string;
  readonly isDisposed: boolean;
  /** the session's kernel (null: none yet, or no kernel) */
  readonly kernel: Kernel.IKernelConnection | null;
  /** the session's status as JupyterLab shows it ('starting', 'idle', ...) */
  readonly kernelDisplayStatus: string;
  readonly pathChanged: ISignal<unknown, unknown>;
  readonly kernelChanged: ISignal<unknown, unknown>;
  /** the session's or the kernel's status changed */
  readonly statusChanged: ISignal<unknown, unknown>;
  /** a cell of this notebook ran: its source */
  readonly cellExecuted: ISignal<unknown, string>;
  /** the notebook's file is read (its metadata is there) */
  readonly contextReady: Promise<void>;
  /** the kernel session is there */
  readonly sessionReady: Promise<void>;
  getMetadata(): Record<string, unknown> | undefined;
  setMetadata(value: Record<string, unknown>): void;
  insertCell(source: string, run: boolean, where: ICellPlace): Promise<boolean>;
}

/** What a NotebookChat needs of the panel's model (SqlnbModel). */
export interface IChatOwner {
  readonly settings: ISqlnbSettings;
  bridgeFor(kernel: Kernel.IKernelConnection, path: () => string): KernelBridge;
  registerRun(run: string, chat: NotebookChat): void;
  forgetRun(run: string): void;
  flushRun(run: string): void;
}

function asError(e: unknown): ErrorInfo {
  if (e instanceof RequestError) {
    return e.info;
  }
  return { kind: 'error', message: e instanceof Error ? e.message : String(e) };
}

const GONE = 'The kernel no longer has this result: insert the cell and run it to see every row.';

/** The state of the panel for one notebook. */
export class NotebookChat {
  constructor(host: INotebookHost, owner: IChatOwner) {
    this._host = host;
    this._owner = owner;
    this._conversation.onChange(change => this._onConversation(change));
    host.kernelChanged.connect(this._attachKernel, this);
    host.statusChanged.connect(this._onStatus, this);
    host.cellExecuted.connect(this._onExecuted, this);
    host.pathChanged.connect(this._onPath, this);
    void host.contextReady.then(() => {
      if (this._disposed) {
        return;
      }
      const meta = host.getMetadata() as { chat?: unknown } | undefined;
      const turns = deserializeChat(meta?.chat);
      if (turns.length && this._conversation.turns.length === 0) {
        this._conversation.reset(turns);
      }
    });
    void host.sessionReady.then(() => this._attachKernel());
  }

  // ---- signals: one per kind of change ---------------------------------------------

  /** The notebook was renamed or moved. */
  get titleChanged(): ISignal<this, void> {
    return this._titleChanged;
  }

  /** The status line (kernel, bridge, a notice) may read differently. */
  get bannerChanged(): ISignal<this, void> {
    return this._bannerChanged;
  }

  /** The kernel's connections, the active one, the configured names or Reconnect's list. */
  get connectionsChanged(): ISignal<this, void> {
    return this._connectionsChanged;
  }

  /** The active connection's tables (or their loading, or why they could not be read). */
  get schemaChanged(): ISignal<this, void> {
    return this._schemaChanged;
  }

  /** A question was asked: its turn. */
  get turnAdded(): ISignal<this, Turn> {
    return this._turnAdded;
  }

  /** A turn changed (a step, its answer, remembered...), not its live line alone. */
  get turnUpdated(): ISignal<this, Turn> {
    return this._turnUpdated;
  }

  /** Every turn changed (loaded from the notebook, a new conversation, a turn dropped). */
  get turnsReset(): ISignal<this, void> {
    return this._turnsReset;
  }

  /** A running turn's live line only: what it does now, the model's text as it is written. */
  get liveChanged(): ISignal<this, Turn> {
    return this._liveChanged;
  }

  /** A question started or ended running, or its run became known (Stop can stop it). */
  get busyChanged(): ISignal<this, Turn | null> {
    return this._busyChanged;
  }

  /** The kernel session's questions so far (the footer). */
  get statsChanged(): ISignal<this, string | null> {
    return this._statsChanged;
  }

  // ---- state ---------------------------------------------------------------------------

  get host(): INotebookHost {
    return this._host;
  }

  get bridge(): KernelBridge | null {
    return this._bridge;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The notebook's file name (the panel shows it; the full path is its tooltip). */
  get title(): string {
    return this._host.path.split('/').pop() || this._host.path;
  }

  get path(): string {
    return this._host.path;
  }

  get turns(): ReadonlyArray<Turn> {
    return this._conversation.turns;
  }

  turn(turnId: string): Turn | null {
    return this._conversation.find(turnId);
  }

  /** The turn still being answered, if any. */
  get running(): Turn | null {
    return this._conversation.running;
  }

  get connections(): ReadonlyArray<ConnectionInfo> {
    return this._connections;
  }

  get active(): string | null {
    return this._active;
  }

  /** The configured connections' names (the connect form offers them). */
  get known(): ReadonlyArray<string> {
    return this._known;
  }

  get schema(): SchemaData | null {
    return this._schema;
  }

  get schemaLoading(): boolean {
    return this._schemaLoading;
  }

  get schemaError(): string | null {
    return this._schemaError;
  }

  /** The kernel session's questions so far, in the kernel's words (null: none asked yet). */
  get stats(): string | null {
    return this._stats;
  }

  /** Text of the question box while another notebook is shown. */
  get draft(): string {
    return this._draft;
  }

  setDraft(text: string): void {
    this._draft = text;
  }

  get isReady(): boolean {
    return this._bridge?.state === 'ready';
  }

  /** The status line shown by the panel. */
  get banner(): IBanner {
    const base = this._baseBanner();
    if (this._notice) {
      return { ...this._notice, action: this._notice.action ?? base.action };
    }
    return base;
  }

  /**
   * What Reconnect offers after a kernel restart: the connections the kernel had, each
   * with how to open it again (`target`: its configured name, or its URL when that holds
   * no password; null: the URL needs its password typed again).
   */
  get reconnectable(): { name: string; url: string; target: string | null }[] {
    if (this._connections.length || !this._lost) {
      return [];
    }
    return this._lastConnections.map(c => ({
      name: c.name,
      url: c.url,
      target: this._known.includes(c.name) ? c.name : c.url.includes('***') ? null : c.url
    }));
  }

  /** A message about something the user did (null clears it). */
  setNotice(notice: IBanner | null): void {
    if (notice === this._notice) {
      return;
    }
    this._notice = notice;
    this._bannerChanged.emit();
  }

  // ---- actions -------------------------------------------------------------------------

  /**
   * The panel shows this notebook: connect, loading sqlnb into the kernel
   * when needed (a hidden panel only probes, see KernelBridge.probe).
   */
  activate(): void {
    this._shown = true;
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
      this.setNotice(null);
      this._setConnections(data);
      return null;
    } catch (e) {
      return describeError(asError(e));
    }
  }

  async useConnection(name: string): Promise<void> {
    const bridge = this._bridge;
    if (!bridge) {
      return;
    }
    try {
      const data: ConnectionsData = await bridge.request('use', { name });
      this.setNotice(null);
      this._setConnections(data);
    } catch (e) {
      this.setNotice({ text: describeError(asError(e)), error: true });
      // the connection list shows the active connection again
      this._connectionsChanged.emit();
    }
  }

  async loadSchema(refresh = false): Promise<void> {
    const bridge = this._bridge;
    const connection = this._active;
    if (!bridge || bridge.state !== 'ready' || !connection) {
      this._setSchema({ schema: null });
      return;
    }
    this._setSchema({ loading: true, error: null });
    try {
      const data: SchemaData = await bridge.request('schema', { connection, refresh });
      if (this._active === connection) {
        this._setSchema({ schema: data, loading: false });
      } else {
        this._setSchema({ loading: false });
      }
    } catch (e) {
      this._setSchema({ error: describeError(asError(e)), loading: false });
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
    const history = selectHistory(this._conversation.turns, this._active);
    const turn = this._conversation.start(question, this._active, followUp);
    this.setNotice(null);
    try {
      const data: AskData = await bridge.request('ask', {
        question,
        ...(this._active ? { connection: this._active } : {}),
        ...(settings.model ? { model: settings.model } : {}),
        ...(settings.maxIterationsSet ? { max_iterations: settings.maxIterations } : {}),
        rows: settings.rowsShown,
        new: this._newNext,
        history
      });
      this._newNext = false;
      const run = String(data.run);
      this._owner.registerRun(run, this);
      this._conversation.bindRun(turn.id, run);
      // saved soon: a page reloaded mid-answer shows the question as interrupted; not at
      // once, since writing the whole chat into the notebook's metadata would hold up the
      // run's first events, which arrive right behind this reply
      this._saveSoon();
      this._owner.flushRun(run);
    } catch (e) {
      this._conversation.remove(turn.id);
      throw e;
    }
  }

  /**
   * More of an answer's result rows, from the result the kernel keeps with its run. Resolves
   * to an error text, or null. An answer from before a kernel restart has no rows there.
   */
  async loadMoreRows(turnId: string, limit = ROWS_PAGE): Promise<string | null> {
    const turn = this._conversation.find(turnId);
    const bridge = this._bridge;
    if (!turn) {
      return null;
    }
    if (!turn.run || !bridge || bridge.state !== 'ready') {
      return GONE;
    }
    try {
      const data: RowsData = await bridge.request('rows', { run: turn.run, offset: turn.rows.length, limit });
      this._conversation.addRows(turnId, data.offset, data.rows, data.row_count);
      return null;
    } catch (e) {
      const info = asError(e);
      return info.kind === 'UsageError' ? GONE : describeError(info);
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
    const conv = this._conversation;
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
    const turn = this._conversation.find(turnId);
    const alt = turn?.alternatives[index];
    if (!turn || !alt) {
      return false;
    }
    this._conversation.pickAlternative(turnId, index);
    this._save();
    return this.insertCell(alt.cell ?? alt.sql, false, { end: true, focus: true });
  }

  /** Forget the conversation; the next question starts a new one in the kernel. */
  clear(): void {
    if (this.running) {
      return;
    }
    this._newNext = true;
    this._conversation.reset([]);
    this._save();
  }

  /** A run event of this notebook's conversation. */
  handleEvent(run: string, event: RunEvent): void {
    this._conversation.applyEvent(run, event, this._owner.settings.rowsShown);
    if (event.type === 'done' && typeof event.stats_label === 'string' && event.stats_label) {
      this._setStats(event.stats_label);
    }
  }

  /** Insert `source` as a code cell of this notebook, as one undo step; optionally run it. */
  insertCell(source: string, run: boolean, where: ICellPlace = {}): Promise<boolean> {
    if (this._host.isDisposed) {
      return Promise.resolve(false);
    }
    return this._host.insertCell(source, run, where);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._host.cellExecuted.disconnect(this._onExecuted, this);
    Signal.clearData(this);
  }

  // ---- private -------------------------------------------------------------------------

  private _baseBanner(): IBanner {
    const kernel = this._host.kernel;
    if (!kernel) {
      const status = this._host.kernelDisplayStatus;
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
        if (!this._connections.length) {
          return {
            text: this.reconnectable.length
              ? 'The kernel restarted: its database connections are gone. Reconnect below.'
              : 'No database connection in this kernel yet: connect below, or run %sqlnb connect URL --name NAME in a cell.',
            error: false
          };
        }
        return { text: `Connected: ${this._active ?? 'no active connection'}`, error: false };
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

  private _onConversation(change: ConversationChange): void {
    switch (change.kind) {
      case 'live':
        // the live line alone: nothing else changed with it
        this._liveChanged.emit(change.turn);
        return;
      case 'added':
        this._turnAdded.emit(change.turn);
        break;
      case 'reset':
        this._turnsReset.emit();
        break;
      case 'updated':
        this._turnUpdated.emit(change.turn);
        this._afterUpdate(change.turn);
        break;
    }
    const running = this.running;
    const key = running ? `${running.id} ${running.run ?? ''}` : '';
    if (key !== this._busyKey) {
      this._busyKey = key;
      this._busyChanged.emit(running);
    }
  }

  private _afterUpdate(turn: Turn): void {
    if (isFinished(turn) && this._host.isDisposed) {
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
      if (this._notice && !this._notice.error) {
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

  /** Save when the page is idle (within a second): off the path of the run's events. */
  private _saveSoon(): void {
    if (this._savePending) {
      return;
    }
    this._savePending = true;
    const save = () => {
      this._savePending = false;
      this._save();
    };
    const idle = (globalThis as { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number })
      .requestIdleCallback;
    if (idle) {
      idle(save, { timeout: 1000 });
    } else {
      setTimeout(save, 0);
    }
  }

  private _save(): void {
    if (this._host.isDisposed) {
      return;
    }
    const prev = this._host.getMetadata() ?? {};
    this._host.setMetadata({
      ...prev,
      chat: serializeChat(this._conversation.turns, this._owner.settings.rowsShown)
    });
  }

  private _attachKernel(): void {
    if (this._disposed) {
      return;
    }
    const kernel = this._host.kernel;
    const bridge = kernel ? this._owner.bridgeFor(kernel, () => this._host.path) : null;
    if (bridge === this._bridge) {
      this._bannerChanged.emit();
      return;
    }
    if (this._bridge) {
      this._bridge.stateChanged.disconnect(this._onBridgeState, this);
    }
    this._conversation.fail({
      kind: 'kernel_changed',
      message: "The notebook's kernel changed before this answer arrived."
    });
    this._bridge = bridge;
    this._connections = [];
    this._active = null;
    this._setSchema({ schema: null });
    if (bridge) {
      bridge.stateChanged.connect(this._onBridgeState, this);
      if (bridge.state === 'ready') {
        this._onBridgeState(bridge, 'ready');
      } else if (this._shown) {
        void bridge.open().catch(() => undefined);
      } else {
        void bridge.probe();
      }
    }
    this._connectionsChanged.emit();
    this._bannerChanged.emit();
  }

  private _onStatus(): void {
    this._bannerChanged.emit();
  }

  private _onPath(): void {
    this._titleChanged.emit();
  }

  private _onExecuted(_: unknown, source: string): void {
    if (this.isReady && !this.running) {
      void this.refreshConnections();
    } else if (this._bridge?.state === 'absent' && /sqlnb|%%ask/.test(source)) {
      // e.g. %load_ext sqlnb just ran
      void this._bridge.probe();
    }
  }

  private _onBridgeState(bridge: KernelBridge, state: BridgeState): void {
    if (state === 'ready') {
      this._notice = null;
      const hello = bridge.hello;
      if (hello) {
        this._setConnections(hello);
      } else {
        void this.refreshConnections();
      }
    } else if (!['idle', 'connecting', 'loading'].includes(state)) {
      // restarted, dead, closed, superseded, ...: no more events can come for a run, and
      // the kernel session whose questions the footer counted is over
      this._setStats(null);
      this._lost = this._lastConnections.length > 0;
      const info = bridge.message ?? { kind: state, message: 'The kernel connection was lost.' };
      this._conversation.fail({
        kind: info.kind,
        message: `${info.message} The question was not answered; ask it again.`
      });
      this._setSchema({ schema: null });
    }
    // whether the kernel is ready decides what the connection list and the form show
    this._connectionsChanged.emit();
    this._bannerChanged.emit();
  }

  private _setConnections(data: ConnectionsData): void {
    const before = this._active;
    const key = JSON.stringify([this._connections, this._active, this._known, this._lost]);
    this._connections = Array.isArray(data.connections) ? data.connections : [];
    if (Array.isArray(data.known)) {
      this._known = data.known.filter(k => typeof k === 'string');
    }
    if (this._connections.length) {
      // what Reconnect offers once a restart took them (names and redacted URLs only)
      this._lastConnections = this._connections.map(c => ({ name: c.name, url: c.url }));
      this._lost = false;
    }
    this._active = data.active ?? this._connections.find(c => c.active)?.name ?? null;
    if (JSON.stringify([this._connections, this._active, this._known, this._lost]) !== key) {
      this._connectionsChanged.emit();
      this._bannerChanged.emit();
    }
    if (this._active !== before || !this._schema) {
      this._setSchema({ schema: null });
      void this.loadSchema();
    }
  }

  private _setSchema(next: { schema?: SchemaData | null; loading?: boolean; error?: string | null }): void {
    const schema = next.schema !== undefined ? next.schema : this._schema;
    const loading = next.loading ?? this._schemaLoading;
    const error = next.error !== undefined ? next.error : this._schemaError;
    if (schema === this._schema && loading === this._schemaLoading && error === this._schemaError) {
      return;
    }
    this._schema = schema;
    this._schemaLoading = loading;
    this._schemaError = error;
    this._schemaChanged.emit();
  }

  private _setStats(stats: string | null): void {
    if (stats !== this._stats) {
      this._stats = stats;
      this._statsChanged.emit(stats);
    }
  }

  private _host: INotebookHost;
  private _owner: IChatOwner;
  private _conversation = new Conversation();
  private _bridge: KernelBridge | null = null;
  private _connections: ConnectionInfo[] = [];
  private _active: string | null = null;
  private _known: string[] = [];
  private _schema: SchemaData | null = null;
  private _schemaLoading = false;
  private _schemaError: string | null = null;
  private _draft = '';
  /** the last message about something the user did (cleared on success) */
  private _notice: IBanner | null = null;
  private _stats: string | null = null;
  private _newNext = false;
  private _shown = false;
  private _saved = new Set<string>();
  private _savePending = false;
  private _disposed = false;
  private _busyKey = '';
  private _lastConnections: { name: string; url: string }[] = [];
  /** the kernel went away (restart, death) while it had connections */
  private _lost = false;
  private _titleChanged = new Signal<this, void>(this);
  private _bannerChanged = new Signal<this, void>(this);
  private _connectionsChanged = new Signal<this, void>(this);
  private _schemaChanged = new Signal<this, void>(this);
  private _turnAdded = new Signal<this, Turn>(this);
  private _turnUpdated = new Signal<this, Turn>(this);
  private _turnsReset = new Signal<this, void>(this);
  private _liveChanged = new Signal<this, Turn>(this);
  private _busyChanged = new Signal<this, Turn | null>(this);
  private _statsChanged = new Signal<this, string | null>(this);
}
