/**
 * The local model the Jupyter server shares with its notebooks (`GET /sqlnb/model`,
 * docs/models.md): reading its reply and the line the panel shows for it.
 *
 * Plain TypeScript, no JupyterLab imports (unit-tested under node).
 */
import { withHint } from './protocol';

/**
 * off: the shared process is turned off; none: no local model to share (the kernels use
 * another model, or the server has no sqlnb extension); then the process's own states.
 */
export type ModelServerState = 'off' | 'none' | 'loading' | 'ready' | 'failed' | 'stopped';

const STATES: ReadonlyArray<ModelServerState> = ['off', 'none', 'loading', 'ready', 'failed', 'stopped'];

export interface IModelServerStatus {
  state: ModelServerState;
  /** "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m" (null: none named) */
  model: string | null;
  /** seconds since it started loading, when the server answered (while `loading`) */
  secondsLoading: number | null;
  /** how long it took to load (once `ready`) */
  loadSeconds: number | null;
  error: string | null;
  /** what to do about the error ("sqlnb model download qwen2.5-coder-1.5b") */
  hint: string | null;
}

/** What the panel knows before the server answered, or when it cannot say. */
export const NO_MODEL_SERVER: IModelServerStatus = {
  state: 'none',
  model: null,
  secondsLoading: null,
  loadSeconds: null,
  error: null,
  hint: null
};

function num(x: unknown): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

function text(x: unknown): string | null {
  return typeof x === 'string' && x.trim() ? x : null;
}

/** The reply of `GET /sqlnb/model`; anything malformed reads as no shared model. */
export function parseModelServerStatus(data: unknown): IModelServerStatus {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return NO_MODEL_SERVER;
  }
  const r = data as Record<string, unknown>;
  const state = STATES.find(s => s === r.state);
  if (!state) {
    return NO_MODEL_SERVER;
  }
  return {
    state,
    model: text(r.model),
    secondsLoading: num(r.seconds_loading),
    loadSeconds: num(r.load_seconds),
    error: text(r.error),
    hint: text(r.hint)
  };
}

/** How long the panel says "Local model ready" after it saw the model load (ms). */
export const READY_SHOWN_MS = 5000;

/** How often the panel asks again while the model loads (ms). */
export const LOADING_POLL_MS = 2000;

export interface IModelStatusLine {
  kind: 'loading' | 'ready' | 'failed' | 'stopped';
  text: string;
  /** what to do, as the server said it (a command: `command` is true) */
  hint: string | null;
  command: boolean;
  /** the model's name, for the tooltip */
  title: string;
}

/** A hint that is a command to type ("sqlnb model download qwen2.5-coder-1.5b"). */
function isCommand(hint: string): boolean {
  return /^(sqlnb|pip|%pip|python) \S/.test(hint.trim());
}

/**
 * The panel's line for the shared model: `loadingSince` is when loading started on this
 * page's clock (`Date.now()` less the server's seconds), `sawLoading` whether this page saw
 * it load (only then is "ready" worth saying, and only for a moment). Null: nothing to say
 * (no shared model, or it is ready).
 */
export function modelStatusLine(
  status: IModelServerStatus,
  options: { now?: number; loadingSince?: number | null; sawLoading?: boolean } = {}
): IModelStatusLine | null {
  const title = status.model ? `The local model shared by this Jupyter server: ${status.model}` : '';
  const line = (
    kind: IModelStatusLine['kind'],
    text: string,
    hint: string | null = null
  ): IModelStatusLine => {
    const command = hint !== null && isCommand(hint);
    return {
      kind,
      text,
      hint: hint === null ? null : command ? hint.trim() : withHint(hint),
      command,
      title
    };
  };
  switch (status.state) {
    case 'loading': {
      const now = options.now ?? Date.now();
      const since = options.loadingSince ?? null;
      const seconds =
        since !== null
          ? Math.max(0, Math.floor((now - since) / 1000))
          : Math.floor(status.secondsLoading ?? 0);
      return line('loading', `Loading the local model… ${seconds} s`);
    }
    case 'ready':
      if (!options.sawLoading) {
        return null;
      }
      return line(
        'ready',
        status.loadSeconds !== null
          ? `Local model ready (loaded in ${Math.round(status.loadSeconds)} s)`
          : 'Local model ready'
      );
    case 'failed':
      return line('failed', withHint(status.error ?? 'the local model could not be loaded'), status.hint);
    case 'stopped':
      return line(
        'stopped',
        withHint(status.error ?? 'the local model stopped'),
        status.hint ?? 'restart JupyterLab to load it again'
      );
    default:
      return null;
  }
}
