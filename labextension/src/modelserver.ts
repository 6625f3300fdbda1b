/**
 * The local model the Jupyter server shares with its notebooks, as the panel follows it:
 * `GET /sqlnb/model` when the panel opens and, while the model loads, every 2 s.
 *
 * The request is given (index.ts: ServerConnection.makeRequest), so this runs under node
 * in the unit tests.
 */
import { ISignal, Signal } from '@lumino/signaling';
import {
  IModelServerStatus,
  LOADING_POLL_MS,
  modelStatusLine,
  IModelStatusLine,
  NO_MODEL_SERVER,
  parseModelServerStatus,
  READY_SHOWN_MS
} from './core/modelstatus';

/**
 * Asks the server once: the reply's JSON, or null when the server has no such route (an
 * older sqlnb, a server without the extension). Rejects when the server cannot be reached.
 */
export type ModelStatusRequest = () => Promise<unknown | null>;

export class ModelServerStatus {
  constructor(request: ModelStatusRequest, options: { pollMs?: number; readyShownMs?: number } = {}) {
    this._request = request;
    this._pollMs = options.pollMs ?? LOADING_POLL_MS;
    this._readyShownMs = options.readyShownMs ?? READY_SHOWN_MS;
  }

  /** The state changed (or "ready" stopped being news). */
  get changed(): ISignal<this, IModelServerStatus> {
    return this._changed;
  }

  get status(): IModelServerStatus {
    return this._status;
  }

  /** When loading started, on this page's clock (null: not loading). */
  get loadingSince(): number | null {
    return this._loadingSince;
  }

  /** The line the panel shows now (null: nothing to say). */
  line(now = Date.now()): IModelStatusLine | null {
    return modelStatusLine(this._status, {
      now,
      loadingSince: this._loadingSince,
      sawLoading: this._readyUntil !== null && now < this._readyUntil
    });
  }

  /** Ask the server now (the panel opened); while the model loads, again every 2 s. */
  async refresh(): Promise<void> {
    if (this._disposed || this._inFlight) {
      return;
    }
    this._inFlight = true;
    let next: IModelServerStatus | null;
    try {
      const data = await this._request();
      next = data === null ? NO_MODEL_SERVER : parseModelServerStatus(data);
    } catch {
      // not reachable now: keep what is known, and ask again if it was loading
      next = null;
    } finally {
      this._inFlight = false;
    }
    if (this._disposed) {
      return;
    }
    if (next) {
      this._set(next);
    }
    if (this._status.state === 'loading') {
      this._schedule();
    }
  }

  dispose(): void {
    this._disposed = true;
    this._clearTimers();
    Signal.clearData(this);
  }

  private _set(next: IModelServerStatus): void {
    const was = this._status.state;
    if (next.state === 'loading') {
      const since = Date.now() - (next.secondsLoading ?? 0) * 1000;
      // the server's count of seconds is the truth; the page's clock keeps it going
      this._loadingSince = this._loadingSince === null ? since : Math.min(this._loadingSince, since);
    } else {
      this._loadingSince = null;
    }
    if (was === 'loading' && next.state === 'ready') {
      // seen loading here: say it is ready, for a moment
      this._readyUntil = Date.now() + this._readyShownMs;
      this._readyTimer = setTimeout(() => {
        this._readyTimer = null;
        this._changed.emit(this._status);
      }, this._readyShownMs);
    }
    const changed = JSON.stringify(next) !== JSON.stringify(this._status);
    this._status = next;
    if (changed) {
      this._changed.emit(next);
    }
  }

  private _schedule(): void {
    if (this._pollTimer !== null) {
      return;
    }
    this._pollTimer = setTimeout(() => {
      this._pollTimer = null;
      void this.refresh();
    }, this._pollMs);
  }

  private _clearTimers(): void {
    for (const t of [this._pollTimer, this._readyTimer]) {
      if (t !== null) {
        clearTimeout(t);
      }
    }
    this._pollTimer = null;
    this._readyTimer = null;
  }

  private _request: ModelStatusRequest;
  private _pollMs: number;
  private _readyShownMs: number;
  private _status: IModelServerStatus = NO_MODEL_SERVER;
  private _loadingSince: number | null = null;
  private _readyUntil: number | null = null;
  private _inFlight = false;
  private _disposed = false;
  private _pollTimer: ReturnType<typeof setTimeout> | null = null;
  private _readyTimer: ReturnType<typeof setTimeout> | null = null;
  private _changed = new Signal<this, IModelServerStatus>(this);
}
