/**
 * The sqlnb kernel <-> panel comm protocol (docs/protocol.md), version 1.
 *
 * Plain TypeScript: message types, parsing and request/reply bookkeeping.
 * No JupyterLab imports, so it is unit-tested under node.
 */

export const PROTOCOL_VERSION = 1;
export const COMM_TARGET = 'sqlnb';

export interface ErrorInfo {
  kind: string;
  message: string;
  hint?: string | null;
}

export interface ConnectionInfo {
  name: string;
  engine: string;
  url: string;
  readonly?: boolean;
  active?: boolean;
  /** what the connection's credentials may write (feature `write_access`) */
  write_access?: WriteAccessInfo | null;
}

/** What a connection's credentials may change, as the kernel found it on connect. */
export interface WriteAccessInfo {
  /** null: the kernel could not tell */
  can_write: boolean | null;
  /** a few words ("read-only role", "can write 37 tables") */
  label: string;
  /** the full sentence for people */
  summary: string;
  writable_tables?: number | null;
  superuser?: boolean | null;
}

export type WriteAccessState = 'read-only' | 'writable' | 'unknown';

/** The connection indicator: short text for the 250 px sidebar, the full sentence as its
 * tooltip; null when the kernel said nothing (an older sqlnb). */
export function writeAccessIndicator(
  info: WriteAccessInfo | null | undefined
): { text: string; title: string; state: WriteAccessState } | null {
  if (!info || typeof info !== 'object' || typeof info.label !== 'string' || !info.label) {
    return null;
  }
  const state: WriteAccessState =
    info.can_write === false ? 'read-only' : info.can_write === true ? 'writable' : 'unknown';
  const summary = typeof info.summary === 'string' && info.summary ? info.summary : info.label;
  return { text: info.label, title: summary, state };
}

export interface ConnectionsData {
  connections: ConnectionInfo[];
  active: string | null;
  /** the configured connections' names (feature `connect`) */
  known?: string[];
  /** the connection a `connect` request opened */
  connected?: string;
}

export interface HelloData extends ConnectionsData {
  protocol: number;
  sqlnb?: string;
  python?: string;
  /** what the kernel's sqlnb does beyond protocol 1's first version ("remember", ...) */
  features?: string[];
}

/** Whether the kernel's hello names a feature (an older sqlnb names none). */
export function hasFeature(hello: HelloData | null | undefined, feature: string): boolean {
  return !!hello && Array.isArray(hello.features) && hello.features.includes(feature);
}

export type ConfidenceLevel = 'high' | 'medium' | 'low';

/** How far the kernel trusts an answer (the done event's `confidence`). */
export interface Confidence {
  level: ConfidenceLevel;
  /** 0..1, or null when the kernel gave none */
  score: number | null;
  /** sentences for people: why this level */
  reasons: string[];
  /** the badge's words as the kernel wrote them (the done event's `confidence_labels`) */
  labels?: ConfidenceLabels | null;
}

/** The words of a confidence badge (the done event's `confidence_labels`, sqlnb.labels). */
export interface ConfidenceLabels {
  label: string;
  aria_label: string;
  tooltip: string;
  /** the reasons as sentences */
  reasons: string[];
}

/** The reply data of `ask`: the run's id; the run then streams its events. */
export interface AskData {
  run: string;
}

/** The reply data of `remember`: the memory store's id of the pair. */
export interface RememberData {
  id: number;
}

export interface ColumnInfo {
  name: string;
  type: string;
  nullable?: boolean;
  pk?: boolean;
  fk?: string | null;
}

export interface TableInfo {
  schema?: string | null;
  name: string;
  kind?: string;
  comment?: string | null;
  columns: ColumnInfo[];
}

export interface SchemaData {
  connection: string;
  dialect?: string;
  tables: TableInfo[];
}

export type DoneStatus = 'success' | 'failed' | 'needs_clarification' | 'stopped' | 'error';

export const DONE_STATUSES: ReadonlyArray<DoneStatus> = [
  'success',
  'failed',
  'needs_clarification',
  'stopped',
  'error'
];

export interface StartedEvent {
  type: 'started';
  question?: string;
  connection?: string;
  dialect?: string;
  model?: string;
  max_iterations?: number;
  /** the step as the panel shows it (sqlnb.labels; also on reply, attempt and done) */
  label?: string | null;
}

export interface ReplyEvent {
  type: 'reply';
  iteration?: number;
  max_iterations?: number;
  sql?: string | null;
  final?: boolean;
  clarify?: string[] | string | null;
  candidates?: unknown;
  model_error?: string | null;
  label?: string | null;
}

export interface AttemptEvent {
  type: 'attempt';
  n?: number;
  max_iterations?: number;
  sql?: string | null;
  ok?: boolean;
  row_count?: number | null;
  truncated?: boolean;
  error_kind?: string | null;
  error?: string | null;
  elapsed?: number | null;
  candidates?: number | null;
  label?: string | null;
}

/**
 * The answer found so far was not trusted: the turn starts over with remembered
 * answers of this database as examples (its attempts are numbered from 1 again).
 */
export interface MemoryEvent {
  type: 'memory';
  examples?: number;
  level?: string | null;
  /** that second pass found no answer: the first answer stands (this event ends it) */
  kept_first?: boolean;
  text?: string | null;
}

/**
 * What the run is doing now (feature `live`): writing a query or a draft, running a
 * query, checking the answer, explaining it. Not a step: shown while the run goes.
 */
export interface PhaseEvent {
  type: 'phase';
  phase?: string;
  /** the turn's model calls, numbered from 1 (phase `writing`) */
  call?: number;
  purpose?: string;
  draft?: number;
  drafts?: number;
  label?: string | null;
}

/**
 * The model's reply as it is written (feature `live`): call `call`'s text from
 * character `offset` on (offset 0 after earlier text: the call was tried again).
 */
export interface TextEvent {
  type: 'text';
  call?: number;
  offset?: number;
  text?: string;
}

/** The answer is found: the model is explaining it (one more call). */
export interface ExplainingEvent {
  type: 'explaining';
  label?: string | null;
}

export interface DoneEvent {
  type: 'done';
  status: DoneStatus;
  stop_reason?: string | null;
  sql?: string | null;
  questions?: string[] | null;
  columns?: string[] | null;
  rows?: unknown[][] | null;
  row_count?: number | null;
  cell?: string | null;
  connection?: string | null;
  iterations?: number | null;
  usage?: unknown;
  elapsed?: number | null;
  confidence?: Confidence | null;
  confidence_labels?: ConfidenceLabels | null;
  /** the SQL laid out one clause per line in the dialect (for people; `sql` is what ran) */
  sql_pretty?: string | null;
  /** a Vega-Lite v5 spec when the result suits a chart (null: none) */
  chart?: Record<string, unknown> | null;
  /** the answer's cell that also draws the chart ("Insert chart") */
  chart_cell?: string | null;
  /** the kernel session's questions so far, in one line for people (feature `stats`) */
  stats_label?: string | null;
  /** the other results the drafts gave, where they disagreed */
  alternatives?: Alternative[] | null;
  /** two to four sentences on what the answer computed and assumes, every number and
   * name found in the question, the SQL or the result (null: none) */
  explanation?: string | null;
  /** a follow-up question rewritten to stand alone, as the kernel answered it (null: the
   * question was answered as it was asked) */
  answered_as?: string | null;
  error?: ErrorInfo | null;
  /** how the run ended, in one line (null for `error`: its error says it) */
  label?: string | null;
}

/** Another result the drafts of an answer gave, and the cell that inserts it instead. */
export interface Alternative {
  /** "1. 2 drafts, 3 rows" */
  label: string;
  sql: string;
  drafts: number;
  row_count?: number | null;
  columns: string[];
  rows: unknown[][];
  cell: string | null;
  /** its SQL laid out one clause per line (the dialect's pretty form) */
  sql_pretty?: string | null;
}

export type RunEvent =
  | StartedEvent
  | ReplyEvent
  | AttemptEvent
  | MemoryEvent
  | ExplainingEvent
  | PhaseEvent
  | TextEvent
  | DoneEvent;

export interface ReplyMessage {
  v: number;
  type: 'reply';
  id: string;
  ok: boolean;
  data?: unknown;
  error?: ErrorInfo;
}

export interface EventMessage {
  v: number;
  type: 'event';
  run: string;
  event: RunEvent;
}

export interface InsertCellMessage {
  v: number;
  type: 'insert_cell';
  source: string;
  cell_id: string | null;
  run: boolean;
}

export interface SupersededMessage {
  v: number;
  type: 'superseded';
}

export type KernelMessage = ReplyMessage | EventMessage | InsertCellMessage | SupersededMessage;

export type ParseResult =
  { ok: true; message: KernelMessage } | { ok: false; reason: string; mismatch?: boolean };

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Validate one message from the kernel. Unknown or malformed messages are
 * reported (never thrown) so one bad message cannot break the panel.
 */
export function parseKernelMessage(data: unknown): ParseResult {
  if (!isObject(data)) {
    return { ok: false, reason: 'the message is not a JSON object' };
  }
  if (data.v !== PROTOCOL_VERSION) {
    return {
      ok: false,
      mismatch: true,
      reason: `the kernel speaks panel protocol version ${String(data.v)}, this panel speaks version ${PROTOCOL_VERSION}`
    };
  }
  switch (data.type) {
    case 'reply':
      if (typeof data.id !== 'string' || typeof data.ok !== 'boolean') {
        return { ok: false, reason: 'a reply without id or ok' };
      }
      return { ok: true, message: data as unknown as ReplyMessage };
    case 'event':
      if (typeof data.run !== 'string' || !isObject(data.event) || typeof data.event.type !== 'string') {
        return { ok: false, reason: 'an event without run or event type' };
      }
      if (
        !['started', 'reply', 'attempt', 'memory', 'explaining', 'phase', 'text', 'done'].includes(
          data.event.type
        )
      ) {
        return {
          ok: false,
          reason: `an event of unknown type ${data.event.type}`
        };
      }
      return { ok: true, message: data as unknown as EventMessage };
    case 'insert_cell':
      if (typeof data.source !== 'string') {
        return { ok: false, reason: 'insert_cell without source' };
      }
      return {
        ok: true,
        message: {
          v: PROTOCOL_VERSION,
          type: 'insert_cell',
          source: data.source,
          cell_id: typeof data.cell_id === 'string' ? data.cell_id : null,
          run: data.run === true
        }
      };
    case 'superseded':
      return { ok: true, message: { v: PROTOCOL_VERSION, type: 'superseded' } };
    default:
      return {
        ok: false,
        reason: `a message of unknown type ${String(data.type)}`
      };
  }
}

/** An error reply (or a local failure) of one request. */
export class RequestError extends Error {
  readonly kind: string;
  readonly hint: string | null;
  constructor(info: ErrorInfo) {
    super(info.message);
    this.kind = info.kind;
    this.hint = info.hint ?? null;
  }
  get info(): ErrorInfo {
    return { kind: this.kind, message: this.message, hint: this.hint };
  }
}

interface Pending {
  resolve: (data: unknown) => void;
  reject: (err: RequestError) => void;
}

/**
 * Request ids and their pending promises: one reply per request id.
 */
export class RequestTracker {
  private _pending = new Map<string, Pending>();
  private _next = 0;
  private _prefix: string;

  constructor(prefix?: string) {
    this._prefix = prefix ?? Math.random().toString(36).slice(2, 8);
  }

  /** Build a request message and the promise of its reply's data. */
  make(
    type: string,
    fields: Record<string, unknown> = {}
  ): { message: Record<string, unknown>; reply: Promise<unknown> } {
    const id = `${this._prefix}-${++this._next}`;
    const reply = new Promise<unknown>((resolve, reject) => {
      this._pending.set(id, { resolve, reject });
    });
    return {
      message: { ...fields, v: PROTOCOL_VERSION, type, id },
      reply
    };
  }

  /** Settle the request a reply answers; false when no such request waits. */
  handleReply(msg: ReplyMessage): boolean {
    const pending = this._pending.get(msg.id);
    if (!pending) {
      return false;
    }
    this._pending.delete(msg.id);
    if (msg.ok) {
      pending.resolve(msg.data ?? {});
    } else {
      pending.reject(
        new RequestError(msg.error ?? { kind: 'error', message: 'The kernel refused the request.' })
      );
    }
    return true;
  }

  /** Fail one request locally (e.g. the message could not be sent). */
  fail(id: string, info: ErrorInfo): void {
    const pending = this._pending.get(id);
    if (pending) {
      this._pending.delete(id);
      pending.reject(new RequestError(info));
    }
  }

  /** Fail every waiting request (comm closed, kernel restarted). */
  failAll(info: ErrorInfo): void {
    const all = [...this._pending.values()];
    this._pending.clear();
    for (const p of all) {
      p.reject(new RequestError(info));
    }
  }

  get size(): number {
    return this._pending.size;
  }
}

/** A person-readable sentence for an error reply. */
export function describeError(info: ErrorInfo): string {
  switch (info.kind) {
    case 'protocol_mismatch':
      return (
        "The kernel's sqlnb and this JupyterLab extension speak different panel protocols. " +
        'Install the same sqlnb version in the kernel environment and in JupyterLab, then restart the kernel.'
      );
    case 'busy':
      return 'A question is still being answered in this kernel; wait for it or press Stop.';
    default:
      return withHint(info.message, info.hint);
  }
}

/** "Message. Hint." — the kernel's messages and hints are phrases without end marks. */
export function withHint(message: string, hint?: string | null): string {
  const sentence = (s: string) => {
    const t = s.trim();
    if (!t) {
      return '';
    }
    // names keep their case (sqlnb, %pip, a table)
    const cap = /^(sqlnb\b|%)/.test(t) ? t : t[0].toUpperCase() + t.slice(1);
    return /[.!?:]$/.test(cap) ? cap : `${cap}.`;
  };
  const m = sentence(message);
  return hint && hint.trim() ? `${m} ${sentence(hint)}` : m;
}

/** A page of an answer's result rows (the `rows` request). */
export interface RowsData {
  run: string;
  offset: number;
  columns: string[];
  rows: unknown[][];
  row_count: number;
  truncated?: boolean;
}
