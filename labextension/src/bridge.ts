/**
 * One sqlnb comm per kernel: opening it (loading the extension silently when
 * the target is missing), requests and replies, run events, kernel commands,
 * and reopening after kernel restarts (the approach of ipywidgets' lab
 * manager: follow the kernel's status instead of waiting a fixed time).
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import {
  COMM_TARGET,
  ErrorInfo,
  HelloData,
  InsertCellMessage,
  parseKernelMessage,
  PROTOCOL_VERSION,
  RequestError,
  RequestTracker,
  RunEvent
} from './core/protocol';

/** What the panel runs to load sqlnb into a kernel (ModuleNotFoundError: not installed). */
export const LOAD_SQLNB = "__import__('sqlnb').load_ipython_extension(get_ipython())";

export const CLIENT_VERSION = '0.1.0';

/** What a comm sends: JSON (the protocol's messages are built as plain objects). */
type CommData = Parameters<Kernel.IComm['send']>[0];

export type BridgeState =
  | 'idle' // not opened yet
  | 'absent' // sqlnb is not loaded in the kernel (a probe found no comm target)
  | 'connecting'
  | 'loading' // running %load_ext sqlnb
  | 'ready'
  | 'closed' // the kernel closed the comm; reopens on the next request
  | 'restarting'
  | 'dead'
  | 'superseded'
  | 'no_comms'
  | 'not_installed'
  | 'not_python'
  | 'mismatch'
  | 'failed';

const REOPENABLE: BridgeState[] = ['idle', 'absent', 'closed', 'failed'];

export interface IRunEventArgs {
  run: string;
  event: RunEvent;
}

export class KernelBridge {
  constructor(kernel: Kernel.IKernelConnection, notebookPath: () => string) {
    this.kernel = kernel;
    this._notebookPath = notebookPath;
    this._tracker = new RequestTracker();
    kernel.statusChanged.connect(this._onKernelStatus, this);
    kernel.disposed.connect(() => this.dispose());
  }

  readonly kernel: Kernel.IKernelConnection;

  get state(): BridgeState {
    return this._state;
  }

  /** What the panel says about the state (null when all is well). */
  get message(): ErrorInfo | null {
    return this._message;
  }

  get hello(): HelloData | null {
    return this._hello;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  get stateChanged(): ISignal<this, BridgeState> {
    return this._stateChanged;
  }

  get runEvent(): ISignal<this, IRunEventArgs> {
    return this._runEvent;
  }

  get insertCell(): ISignal<this, InsertCellMessage> {
    return this._insertCell;
  }

  /**
   * Open the comm (once at a time), loading sqlnb into the kernel silently
   * when it is not loaded. `force` also retries after states that need the
   * user (superseded, not installed, no comms, mismatch).
   */
  open(force = false): Promise<void> {
    return this._start(force, true);
  }

  /**
   * Connect only if sqlnb is already loaded in the kernel (nothing is run in
   * it): a notebook opened with the panel hidden shows its connection in the
   * status bar without importing sqlnb into every kernel.
   */
  probe(): Promise<void> {
    if (this._state !== 'idle' && this._state !== 'absent') {
      return Promise.resolve();
    }
    return this._start(false, false).catch(() => undefined);
  }

  private _start(force: boolean, load: boolean): Promise<void> {
    if (this._disposed) {
      return Promise.reject(new RequestError({ kind: 'disposed', message: 'The kernel is gone.' }));
    }
    if (this._state === 'ready') {
      return Promise.resolve();
    }
    if (this._opening) {
      // a probe under way: open for real once it ends
      return load && !this._openingLoads ? this._opening.then(() => this._start(force, load)) : this._opening;
    }
    if (!force && !REOPENABLE.includes(this._state)) {
      return Promise.reject(
        new RequestError(
          this._message ?? { kind: this._state, message: 'sqlnb is not available in this kernel.' }
        )
      );
    }
    this._openingLoads = load;
    this._opening = this._open(load).finally(() => {
      this._opening = null;
    });
    return this._opening;
  }

  /**
   * Send a request (opening the comm first when needed); resolves with the reply data,
   * of the shape docs/protocol.md gives for the request (`T`: what the caller reads).
   */
  async request<T = unknown>(type: string, fields: Record<string, unknown> = {}): Promise<T> {
    await this.open();
    return this._send<T>(type, fields);
  }

  /** A message that expects no reply (`inserted`). */
  notify(message: Record<string, unknown>): void {
    if (this._comm && this._state === 'ready') {
      this._comm.send({ ...message, v: PROTOCOL_VERSION } as CommData);
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._tracker.failAll({ kind: 'disposed', message: 'The kernel connection was closed.' });
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // the kernel may already be gone
      }
    }
    this._setState('dead', { kind: 'dead', message: 'The kernel connection was closed.' });
    Signal.clearData(this);
  }

  /** The reply's data is the kernel's JSON, read as `T` (the protocol's shape for `type`). */
  private _send<T = unknown>(type: string, fields: Record<string, unknown>): Promise<T> {
    const comm = this._comm;
    if (!comm) {
      return Promise.reject(
        new RequestError({ kind: 'closed', message: 'sqlnb is not connected to the kernel.' })
      );
    }
    const { message, reply } = this._tracker.make(type, fields);
    try {
      comm.send(message as CommData);
    } catch (e) {
      this._tracker.fail(String(message.id), {
        kind: 'send_failed',
        message: `The request could not be sent: ${String(e)}`
      });
    }
    return reply as Promise<T>;
  }

  private async _open(load: boolean): Promise<void> {
    this._setState('connecting', null);
    try {
      const info = await this.kernel.info;
      const lang = info.language_info?.name ?? '';
      if (lang && lang.toLowerCase() !== 'python') {
        this._fail('not_python', {
          kind: 'not_python',
          message: `sqlnb needs a Python kernel; this notebook's kernel runs ${lang}.`
        });
        return;
      }
    } catch {
      // no kernel info (yet): try anyway
    }
    let result = await this._tryHello();
    if (result === 'target_missing' && !load) {
      this._setState('absent', null);
      return;
    }
    if (result === 'target_missing') {
      this._setState('loading', { kind: 'loading', message: 'Loading sqlnb in the kernel…' });
      const loaded = await this._loadExtension();
      if (!loaded) {
        return;
      }
      result = await this._tryHello();
      if (result === 'target_missing') {
        this._fail('failed', {
          kind: 'failed',
          message: "The kernel did not accept sqlnb's panel connection even after %load_ext sqlnb.",
          hint: 'The sqlnb in this kernel may be older than the panel: install the same version in both.'
        });
      }
    }
  }

  /** One comm + hello; 'ok', 'target_missing' (closed at once) or 'failed'. */
  private async _tryHello(): Promise<'ok' | 'target_missing' | 'failed'> {
    let comm: Kernel.IComm;
    try {
      comm = this.kernel.createComm(COMM_TARGET);
    } catch (e) {
      this._fail('no_comms', {
        kind: 'no_comms',
        message: "This kernel connection cannot open comms, so sqlnb's panel cannot talk to the kernel.",
        hint: 'Another connection to this kernel (another notebook or browser tab) handles its comms: use the panel there, or close it and reload this page.'
      });
      return 'failed';
    }
    this._comm = comm;
    this._superseded = false;
    comm.onMsg = msg => this._onCommMsg(comm, msg);
    comm.onClose = () => this._onCommClose(comm);
    try {
      comm.open({});
      const data: HelloData = await this._send('hello', {
        client: { name: 'sqlnb-jupyterlab', version: CLIENT_VERSION },
        protocol: PROTOCOL_VERSION,
        notebook: this._notebookPath()
      });
      if (data.protocol !== PROTOCOL_VERSION) {
        this._fail('mismatch', {
          kind: 'protocol_mismatch',
          message: `The kernel's sqlnb ${data.sqlnb ?? ''} speaks panel protocol ${String(data.protocol)}; this panel speaks ${PROTOCOL_VERSION}.`,
          hint: 'Install the same sqlnb version in the kernel environment and in JupyterLab, then restart the kernel.'
        });
        return 'failed';
      }
      this._hello = data;
      this._setState('ready', null);
      return 'ok';
    } catch (e) {
      const err = e instanceof RequestError ? e : new RequestError({ kind: 'failed', message: String(e) });
      if (err.kind === 'comm_closed' && this._comm === null) {
        return 'target_missing';
      }
      if (err.kind === 'protocol_mismatch') {
        this._fail('mismatch', {
          kind: 'protocol_mismatch',
          message: "The kernel's sqlnb and this JupyterLab extension speak different panel protocols.",
          hint: 'Install the same sqlnb version in the kernel environment and in JupyterLab, then restart the kernel.'
        });
        return 'failed';
      }
      if (this._state === 'restarting' || this._state === 'dead' || this._disposed) {
        return 'failed';
      }
      this._fail('failed', {
        kind: err.kind,
        message: `sqlnb could not connect: ${err.message}`,
        hint: err.hint
      });
      return 'failed';
    }
  }

  /**
   * Load sqlnb into the kernel silently (no cell, no history); false when it failed.
   * Not `%load_ext`: IPython would then answer the notebook's own `%load_ext sqlnb` with
   * "already loaded"; sqlnb's loader is idempotent, so that cell stays quiet.
   */
  private async _loadExtension(): Promise<boolean> {
    try {
      const future = this.kernel.requestExecute(
        { code: LOAD_SQLNB, silent: true, store_history: false, allow_stdin: false, stop_on_error: false },
        true
      );
      const reply = (await future.done) as KernelMessage.IExecuteReplyMsg;
      const content = reply.content;
      if (content.status === 'ok') {
        return true;
      }
      // an error names the exception; an aborted execution names none
      const { ename, evalue } =
        content.status === 'error' ? content : { ename: undefined, evalue: undefined };
      if (ename === 'ModuleNotFoundError' || ename === 'ImportError') {
        this._fail('not_installed', {
          kind: 'not_installed',
          message: "sqlnb is not installed in this kernel's environment: run %pip install sqlnb",
          hint: 'then restart the kernel.'
        });
      } else {
        this._fail('failed', {
          kind: ename ?? 'error',
          message: `%load_ext sqlnb failed in the kernel: ${ename ?? 'error'}: ${evalue ?? ''}`
        });
      }
    } catch (e) {
      this._fail('failed', { kind: 'failed', message: `%load_ext sqlnb could not run: ${String(e)}` });
    }
    return false;
  }

  private _onCommMsg(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    if (comm !== this._comm) {
      return;
    }
    const parsed = parseKernelMessage(msg.content.data);
    if (!parsed.ok) {
      if (parsed.mismatch) {
        this._tracker.failAll({ kind: 'protocol_mismatch', message: parsed.reason });
        this._fail('mismatch', {
          kind: 'protocol_mismatch',
          message: `The panel cannot read the kernel's messages: ${parsed.reason}.`,
          hint: 'Install the same sqlnb version in the kernel environment and in JupyterLab, then restart the kernel.'
        });
      } else {
        console.warn(`sqlnb: ignored a kernel message (${parsed.reason})`, msg.content.data);
      }
      return;
    }
    const m = parsed.message;
    switch (m.type) {
      case 'reply':
        this._tracker.handleReply(m);
        break;
      case 'event':
        this._runEvent.emit({ run: m.run, event: m.event });
        break;
      case 'insert_cell':
        this._insertCell.emit(m);
        break;
      case 'superseded':
        this._superseded = true;
        break;
    }
  }

  private _onCommClose(comm: Kernel.IComm): void {
    if (comm !== this._comm) {
      return;
    }
    this._comm = null;
    this._tracker.failAll({ kind: 'comm_closed', message: "The kernel closed sqlnb's panel connection." });
    if (this._state === 'connecting') {
      // the hello's rejection reports target_missing
      return;
    }
    if (this._superseded) {
      this._setState('superseded', {
        kind: 'superseded',
        message: "This notebook's sqlnb panel is active in another browser tab.",
        hint: 'Press Use here to take it back.'
      });
    } else if (this._state === 'ready') {
      this._setState('closed', {
        kind: 'closed',
        message: "The kernel closed sqlnb's panel connection; it reopens with your next request."
      });
    }
  }

  private _onKernelStatus(_: Kernel.IKernelConnection, status: KernelMessage.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      if (this._state !== 'restarting') {
        // reload sqlnb after the restart only where it was in use
        this._reopenLoads = !['idle', 'absent', 'dead'].includes(this._state);
      }
      this._dropComm({ kind: 'kernel_restarted', message: 'The kernel restarted.' });
      this._setState('restarting', { kind: 'restarting', message: 'The kernel is restarting…' });
    } else if (status === 'dead') {
      this._dropComm({ kind: 'dead', message: 'The kernel died.' });
      this._setState('dead', {
        kind: 'dead',
        message: 'The kernel died.',
        hint: 'Restart it (Kernel ▸ Restart Kernel) and sqlnb reconnects.'
      });
    } else if (
      (status === 'idle' || status === 'busy') &&
      (this._state === 'restarting' || this._state === 'dead')
    ) {
      this._setState('idle', null);
      if (this._reopenLoads) {
        void this.open().catch(() => undefined);
      } else {
        void this.probe();
      }
    }
  }

  private _dropComm(info: ErrorInfo): void {
    const comm = this._comm;
    this._comm = null;
    this._hello = null;
    this._tracker.failAll(info);
    if (comm && !comm.isDisposed) {
      try {
        comm.dispose();
      } catch {
        // already gone with the kernel
      }
    }
  }

  private _fail(state: BridgeState, info: ErrorInfo): void {
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed && state !== 'no_comms') {
      try {
        comm.close();
      } catch {
        // ignore
      }
    }
    this._setState(state, info);
  }

  private _setState(state: BridgeState, message: ErrorInfo | null): void {
    this._state = state;
    this._message = message;
    this._stateChanged.emit(state);
  }

  private _notebookPath: () => string;
  private _tracker: RequestTracker;
  private _comm: Kernel.IComm | null = null;
  private _state: BridgeState = 'idle';
  private _message: ErrorInfo | null = null;
  private _hello: HelloData | null = null;
  private _opening: Promise<void> | null = null;
  private _superseded = false;
  private _openingLoads = false;
  private _reopenLoads = false;
  private _disposed = false;
  private _stateChanged = new Signal<this, BridgeState>(this);
  private _runEvent = new Signal<this, IRunEventArgs>(this);
  private _insertCell = new Signal<this, InsertCellMessage>(this);
}
