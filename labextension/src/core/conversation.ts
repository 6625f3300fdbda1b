/**
 * One notebook's conversation with sqlnb: turns, the reduction of streamed
 * run events into a turn's view model, history selection for `ask`, and the
 * (de)serialization into the notebook metadata key `sqlnb.chat`.
 *
 * Plain TypeScript, no JupyterLab imports (unit-tested under node).
 */
import { parseConfidence } from './confidence';
import {
  Alternative,
  Confidence,
  DONE_STATUSES,
  DoneStatus,
  ErrorInfo,
  PhaseEvent,
  RunEvent,
  TextEvent,
  withHint
} from './protocol';

export const CHAT_VERSION = 1;
/** Turns kept in a notebook's metadata. */
export const MAX_SAVED_TURNS = 50;
/** Longest SQL / error text kept per saved step. */
const MAX_STEP_TEXT = 2000;

export type TurnStatus = 'running' | DoneStatus;

export interface Step {
  kind: 'attempt' | 'reply' | 'note';
  /** attempt number (attempt) or iteration (reply) */
  n?: number;
  max?: number;
  sql?: string | null;
  ok?: boolean;
  rowCount?: number | null;
  truncated?: boolean;
  errorKind?: string | null;
  error?: string | null;
  candidates?: number | null;
  text?: string;
  /** a note that the turn started over with this many remembered answers as examples */
  examples?: number;
  /** a note that the start over found no answer, so the first answer stands */
  keptFirst?: boolean;
  /** the step in the kernel's words (the event's `label`, sqlnb.labels): shown as it is */
  label?: string;
}

export interface Turn {
  /** local id (stable across reloads) */
  id: string;
  /** the kernel's run id while known */
  run: string | null;
  question: string;
  connection: string | null;
  status: TurnStatus;
  sql: string | null;
  cell: string | null;
  questions: string[];
  columns: string[];
  rows: unknown[][];
  rowCount: number | null;
  steps: Step[];
  error: ErrorInfo | null;
  /** true when this turn answers a clarification of the turn before it */
  followUp?: boolean;
  /** how far the kernel trusts the answer (null: not rated, or no SQL) */
  confidence: Confidence | null;
  /** the other results the drafts gave, where they disagreed (saved) */
  alternatives: Alternative[];
  /** the SQL laid out one clause per line in the dialect (saved; null: show `sql`) */
  sqlPretty?: string | null;
  /** a Vega-Lite spec when the result suits a chart (not saved: its data is inlined) */
  chart?: Record<string, unknown> | null;
  /** the cell that runs the answer and draws its chart (not saved) */
  chartCell?: string | null;
  /** what the answer computed and assumes, in grounded sentences (saved; null: none) */
  explanation: string | null;
  /** the follow-up question rewritten to stand alone, as the kernel answered it (saved;
   * null: the question was answered as it was asked) */
  answeredAs?: string | null;
  /** the memory store's id once the answer was remembered (thumbs-up); saved */
  remembered: number | null;
  /** what the run does now and the model's text as it is written (not saved) */
  live?: LiveState | null;
  /** when the run started, `Date.now()` (not saved) */
  startedAt?: number;
  /** a remember request is on its way (not saved) */
  remembering?: boolean;
  /** why the last remember failed (not saved) */
  rememberError?: string | null;
}

/** A running turn's live line: the phase's words and the current model call's text. */
export interface LiveState {
  label: string;
  call: number | null;
  text: string;
}

/** The longest live text kept (its end: the panel shows the last lines). */
export const LIVE_TEXT_KEPT = 4000;

export interface HistoryItem {
  question: string;
  status: string;
  sql: string | null;
}

let _counter = 0;
export function newTurnId(): string {
  _counter += 1;
  return `t${Date.now().toString(36)}${_counter.toString(36)}`;
}

export function newTurn(question: string, connection: string | null, followUp = false): Turn {
  return {
    id: newTurnId(),
    run: null,
    question,
    connection,
    status: 'running',
    sql: null,
    cell: null,
    questions: [],
    columns: [],
    rows: [],
    rowCount: null,
    steps: [],
    error: null,
    followUp,
    confidence: null,
    alternatives: [],
    explanation: null,
    remembered: null,
    live: null,
    startedAt: Date.now()
  };
}

/**
 * The turn with its `index`-th other reading taken as the answer (the user picked it):
 * its SQL, cell and rows become the answer's, the answer kept first becomes another
 * reading, and the rating and the remembered state go (they were the other answer's).
 */
export function pickAlternative(turn: Turn, index: number): Turn {
  const alt = turn.alternatives[index];
  if (!alt || turn.sql === null) {
    return turn;
  }
  const first: Alternative = {
    label: 'the answer kept first',
    sql: turn.sql,
    drafts: 0,
    row_count: turn.rowCount,
    columns: turn.columns,
    rows: turn.rows,
    cell: turn.cell,
    ...(turn.sqlPretty ? { sql_pretty: turn.sqlPretty } : {})
  };
  return {
    ...turn,
    sql: alt.sql,
    sqlPretty: alt.sql_pretty ?? null,
    chart: null,
    chartCell: null,
    cell: alt.cell,
    columns: alt.columns,
    rows: alt.rows,
    rowCount: alt.row_count ?? alt.rows.length,
    confidence: null,
    explanation: null,
    remembered: null,
    rememberError: null,
    alternatives: [first, ...turn.alternatives.filter((_, i) => i !== index)]
  };
}

/** What an other reading says about itself, without the kernel's number ("2 drafts, 1 row"). */
export function alternativeText(alt: Alternative): string {
  return alt.label.replace(/^\d+\.\s*/, '');
}

/** The other readings of a done event or a saved turn: the well-formed ones. */
export function parseAlternatives(value: unknown): Alternative[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter(
      (a): a is Alternative =>
        typeof a === 'object' && a !== null && typeof a.sql === 'string' && typeof a.label === 'string'
    )
    .map(a => ({
      label: a.label,
      sql: a.sql,
      drafts: typeof a.drafts === 'number' ? a.drafts : 1,
      row_count: typeof a.row_count === 'number' ? a.row_count : null,
      columns: Array.isArray(a.columns) ? a.columns.map(String) : [],
      rows: Array.isArray(a.rows) ? a.rows.filter(Array.isArray) : [],
      cell: typeof a.cell === 'string' ? a.cell : null,
      ...(typeof a.sql_pretty === 'string' && a.sql_pretty ? { sql_pretty: a.sql_pretty } : {})
    }));
}

export function isFinished(turn: Turn): boolean {
  return turn.status !== 'running';
}

function num(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
}

function isDoneStatus(x: unknown): x is DoneStatus {
  return (DONE_STATUSES as ReadonlyArray<unknown>).includes(x);
}

function str(x: unknown): string | null {
  return typeof x === 'string' ? x : null;
}

function candidateCount(x: unknown): number | null {
  if (typeof x === 'number') {
    return x;
  }
  if (Array.isArray(x)) {
    return x.length;
  }
  return null;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The answer's SQL as people read it: laid out in the dialect when the kernel sent that. */
export function shownSql(turn: Turn): string | null {
  const sql = answerSql(turn);
  return sql === null ? null : (turn.sqlPretty ?? sql);
}

/** The turn with more of its result's rows (a page of the `rows` request), in order. */
export function withMoreRows(turn: Turn, offset: number, rows: unknown[][], rowCount: number): Turn {
  if (offset !== turn.rows.length) {
    return turn; // a page that does not follow on (an earlier request's)
  }
  return { ...turn, rows: [...turn.rows, ...rows.map(r => (Array.isArray(r) ? r : [r]))], rowCount };
}

function clarifyList(x: unknown): string[] {
  if (Array.isArray(x)) {
    return x.filter(q => typeof q === 'string' && q.trim() !== '');
  }
  if (typeof x === 'string' && x.trim() !== '') {
    return [x];
  }
  return [];
}

/**
 * Reduce one streamed event into a new turn (the input is not modified).
 * `rowsShown` bounds the result rows kept.
 */
export function applyEvent(turn: Turn, event: RunEvent, rowsShown: number): Turn {
  if (event.type === 'phase' || event.type === 'text') {
    // the live line only: the steps stay the same array (a view redraws just that line)
    return { ...turn, live: liveAfter(turn.live ?? null, event) };
  }
  const t: Turn = { ...turn, steps: [...turn.steps] };
  switch (event.type) {
    case 'started': {
      if (event.connection) {
        t.connection = event.connection;
      }
      const model = event.model ? event.model : 'the default model';
      const on = event.connection
        ? ` on ${event.connection}${event.dialect ? ` (${event.dialect})` : ''}`
        : '';
      t.steps.push({
        kind: 'note',
        text: `Asking ${model}${on}, up to ${event.max_iterations ?? '?'} attempts`,
        ...labelOf(event)
      });
      break;
    }
    case 'reply': {
      const clarify = clarifyList(event.clarify);
      let text: string;
      if (event.model_error) {
        const err = event.model_error;
        text = `The model call failed: ${err.length > 120 ? err.slice(0, 120) + '…' : err}`;
      } else if (clarify.length) {
        text = 'The model asks for a clarification';
      } else if (event.final) {
        text = 'The model accepts the result';
      } else if (event.sql) {
        text = 'The model wrote a query';
      } else {
        text = 'The model replied';
      }
      t.steps.push({
        kind: 'reply',
        n: num(event.iteration),
        max: num(event.max_iterations),
        sql: event.final ? null : str(event.sql),
        candidates: candidateCount(event.candidates),
        text,
        ...labelOf(event)
      });
      break;
    }
    case 'attempt': {
      t.steps.push({
        kind: 'attempt',
        n: num(event.n),
        max: num(event.max_iterations),
        sql: str(event.sql),
        ok: event.ok === true,
        rowCount: num(event.row_count) ?? null,
        truncated: event.truncated === true,
        errorKind: str(event.error_kind),
        error: str(event.error),
        candidates: num(event.candidates) ?? null,
        ...labelOf(event)
      });
      if (event.sql) {
        t.sql = event.sql;
      }
      break;
    }
    case 'memory': {
      const n = num(event.examples) ?? 0;
      if (event.kept_first) {
        // the second pass found no answer: the first one stands
        t.steps.push({
          kind: 'note',
          keptFirst: true,
          text: str(event.text) ?? 'No answer found with the remembered answers: the first answer stands.'
        });
        break;
      }
      t.steps.push({
        kind: 'note',
        examples: n,
        text:
          str(event.text) ??
          `Not sure of that answer: asking again with ${n} remembered answer${n === 1 ? '' : 's'} of this database as examples…`
      });
      break;
    }
    case 'explaining': {
      t.steps.push({ kind: 'note', text: str(event.label) ?? 'Explaining the answer…' });
      break;
    }
    case 'done': {
      t.live = null;
      t.status = DONE_STATUSES.includes(event.status) ? event.status : 'error';
      t.sql = str(event.sql) ?? (t.status === 'success' ? t.sql : t.sql);
      t.cell = str(event.cell);
      t.questions = clarifyList(event.questions);
      t.columns = Array.isArray(event.columns) ? event.columns.map(String) : [];
      t.rows = Array.isArray(event.rows)
        ? event.rows.slice(0, Math.max(0, rowsShown)).map(r => (Array.isArray(r) ? r : [r]))
        : [];
      t.rowCount = num(event.row_count) ?? null;
      t.confidence = t.cell ? parseConfidence(event.confidence, event.confidence_labels) : null;
      t.alternatives = t.status === 'success' ? parseAlternatives(event.alternatives) : [];
      t.explanation = t.status === 'success' ? (str(event.explanation) ?? null) : null;
      t.sqlPretty = t.cell ? (str(event.sql_pretty) ?? null) : null;
      t.answeredAs = str(event.answered_as)?.trim() || null;
      t.chart = t.cell && isObject(event.chart) ? event.chart : null;
      t.chartCell = t.chart ? (str(event.chart_cell) ?? null) : null;
      if (event.connection) {
        t.connection = event.connection;
      }
      if (event.error) {
        t.error = event.error;
      } else if (t.status === 'stopped') {
        t.error = { kind: 'stopped', message: str(event.label) ?? 'Stopped.' };
      } else if (t.status === 'failed') {
        t.error = {
          kind: 'failed',
          message:
            str(event.label) ??
            (event.stop_reason ? `No working query: ${event.stop_reason}.` : 'No working query was found.')
        };
      } else if (t.status === 'error') {
        t.error = { kind: 'error', message: 'The run ended with an error.' };
      }
      break;
    }
  }
  return t;
}

/** The live line after a `phase` or `text` event. */
function liveAfter(prev: LiveState | null, event: PhaseEvent | TextEvent): LiveState {
  if (event.type === 'phase') {
    const writing = event.phase === 'writing';
    return {
      label: str(event.label) ?? 'Working…',
      call: writing ? (num(event.call) ?? null) : (prev?.call ?? null),
      // a new model call starts with no text; another phase keeps the last call's
      text: writing ? '' : (prev?.text ?? '')
    };
  }
  const base = prev ?? { label: 'Working…', call: null, text: '' };
  const call = num(event.call) ?? null;
  const offset = Math.max(0, num(event.offset) ?? 0);
  const before = call === base.call ? base.text : '';
  let text = before.slice(0, offset) + (str(event.text) ?? '');
  if (text.length > LIVE_TEXT_KEPT) {
    text = text.slice(text.length - LIVE_TEXT_KEPT);
  }
  return { ...base, call, text };
}

/** Whether `next` differs from `prev` (the same turn) in its live line only. */
export function onlyLiveChanged(prev: Turn, next: Turn): boolean {
  return (
    prev.id === next.id && prev.steps === next.steps && prev.status === next.status && prev.live !== next.live
  );
}

/** The kernel's label of an event (sqlnb.labels), as a step field. */
function labelOf(event: { label?: string | null }): Pick<Step, 'label'> {
  return typeof event.label === 'string' && event.label ? { label: event.label } : {};
}

/** End a running turn locally (kernel died, restarted, comm lost). */
export function failTurn(turn: Turn, info: ErrorInfo): Turn {
  if (isFinished(turn)) {
    return turn;
  }
  return { ...turn, status: 'error', error: info };
}

/**
 * The earlier turns sent with `ask` as `history`: finished turns on the same
 * connection (oldest first, at most `limit`), without turns that never reached
 * the model (status `error`).
 */
export function selectHistory(
  turns: ReadonlyArray<Turn>,
  connection: string | null,
  limit = 6
): HistoryItem[] {
  const picked = turns.filter(
    t => isFinished(t) && t.status !== 'error' && (connection === null || t.connection === connection)
  );
  return picked.slice(Math.max(0, picked.length - limit)).map(t => ({
    question: t.question,
    status: t.status,
    sql: t.sql
  }));
}

function clip(s: string | null | undefined): string | null {
  if (typeof s !== 'string') {
    return null;
  }
  return s.length > MAX_STEP_TEXT ? s.slice(0, MAX_STEP_TEXT) + '…' : s;
}

function copyField<K extends keyof Step>(to: Step, from: Step, key: K): void {
  to[key] = from[key];
}

function compactStep(s: Step): Step {
  const out: Step = { kind: s.kind };
  for (const key of [
    'n',
    'max',
    'ok',
    'rowCount',
    'truncated',
    'errorKind',
    'candidates',
    'text',
    'examples',
    'keptFirst',
    'label'
  ] as const) {
    if (s[key] !== undefined && s[key] !== null) {
      copyField(out, s, key);
    }
  }
  if (s.sql) {
    out.sql = clip(s.sql);
  }
  if (s.error) {
    out.error = clip(s.error);
  }
  return out;
}

export interface SavedChat {
  version: number;
  turns: Record<string, unknown>[];
}

/** The metadata value `sqlnb.chat` of a conversation. */
export function serializeChat(turns: ReadonlyArray<Turn>, rowsShown: number): SavedChat {
  const kept = turns.slice(Math.max(0, turns.length - MAX_SAVED_TURNS));
  return {
    version: CHAT_VERSION,
    turns: kept.map(t => ({
      id: t.id,
      question: t.question,
      connection: t.connection,
      status: t.status,
      sql: t.sql,
      cell: t.cell,
      questions: t.questions,
      columns: t.columns,
      rows: t.rows.slice(0, Math.max(0, rowsShown)).map(r => r.map(jsonSafe)),
      steps: t.steps.map(compactStep),
      error: t.error,
      ...(t.followUp ? { followUp: true } : {}),
      ...(t.confidence ? { confidence: t.confidence } : {}),
      ...(t.alternatives.length ? { alternatives: t.alternatives } : {}),
      ...(t.explanation ? { explanation: t.explanation } : {}),
      ...(t.sqlPretty ? { sqlPretty: t.sqlPretty } : {}),
      ...(t.answeredAs ? { answeredAs: t.answeredAs } : {}),
      ...(typeof t.remembered === 'number' ? { remembered: t.remembered } : {})
    }))
  };
}

function jsonSafe(v: unknown): unknown {
  if (v === undefined || typeof v === 'function') {
    return null;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) {
    return String(v);
  }
  return v;
}

/**
 * Turns from the metadata value `sqlnb.chat` (anything malformed is dropped;
 * a turn saved while still running comes back as interrupted).
 */
export function deserializeChat(value: unknown): Turn[] {
  if (typeof value !== 'object' || value === null) {
    return [];
  }
  const v = value as Record<string, unknown>;
  if (v.version !== CHAT_VERSION || !Array.isArray(v.turns)) {
    return [];
  }
  const turns: Turn[] = [];
  for (const raw of v.turns) {
    if (typeof raw !== 'object' || raw === null) {
      continue;
    }
    const r = raw as Record<string, unknown>;
    if (typeof r.question !== 'string') {
      continue;
    }
    let status: TurnStatus = isDoneStatus(r.status) ? r.status : 'error';
    const e = typeof r.error === 'object' && r.error !== null ? (r.error as Record<string, unknown>) : null;
    let error: ErrorInfo | null =
      e && typeof e.message === 'string'
        ? { kind: String(e.kind ?? 'error'), message: e.message, hint: str(e.hint) }
        : null;
    if (r.status === 'running') {
      status = 'error';
      error = {
        kind: 'interrupted',
        message: 'This answer was interrupted (the page was reloaded or the kernel restarted).'
      };
    }
    turns.push({
      id: typeof r.id === 'string' ? r.id : newTurnId(),
      run: null,
      question: r.question,
      connection: typeof r.connection === 'string' ? r.connection : null,
      status,
      sql: typeof r.sql === 'string' ? r.sql : null,
      cell: typeof r.cell === 'string' ? r.cell : null,
      questions: clarifyList(r.questions),
      columns: Array.isArray(r.columns) ? r.columns.map(String) : [],
      rows: Array.isArray(r.rows) ? r.rows.filter(Array.isArray) : [],
      rowCount: typeof r.rowCount === 'number' ? r.rowCount : null,
      steps: Array.isArray(r.steps)
        ? r.steps.filter(
            (s: unknown): s is Step =>
              typeof s === 'object' && s !== null && ['attempt', 'reply', 'note'].includes((s as Step).kind)
          )
        : [],
      error,
      followUp: r.followUp === true,
      confidence: parseConfidence(r.confidence),
      alternatives: parseAlternatives(r.alternatives),
      explanation: typeof r.explanation === 'string' && r.explanation ? r.explanation : null,
      sqlPretty: typeof r.sqlPretty === 'string' && r.sqlPretty ? r.sqlPretty : null,
      answeredAs: typeof r.answeredAs === 'string' && r.answeredAs ? r.answeredAs : null,
      remembered: typeof r.remembered === 'number' && Number.isFinite(r.remembered) ? r.remembered : null
    });
  }
  return turns;
}

/**
 * The SQL an answer offers (with Insert / Copy / Remember): the final SQL of a success,
 * and the best query found before a clarification question; null for anything else.
 */
export function answerSql(turn: Turn): string | null {
  if (turn.status === 'success') {
    return turn.sql;
  }
  if (turn.status === 'needs_clarification' && turn.cell) {
    // the done event's SQL (cell is null when the kernel kept no query)
    return turn.sql;
  }
  return null;
}

/** Whether the thumbs-up is offered: an answer with SQL, not remembered yet. */
export function canRemember(turn: Turn): boolean {
  return answerSql(turn) !== null && turn.remembered === null && !turn.remembering;
}

/**
 * The fields of the `remember` request for a turn: its run (the kernel then stores the
 * exact question, SQL and connection it produced) and, for a kernel that no longer knows
 * the run (page reloaded, kernel restarted), the answer as the panel holds it.
 */
export function rememberFields(turn: Turn): Record<string, unknown> | null {
  const sql = answerSql(turn);
  if (sql === null) {
    return null;
  }
  return {
    ...(turn.run ? { run: turn.run } : {}),
    question: turn.question,
    sql,
    ...(turn.connection ? { connection: turn.connection } : {})
  };
}

/**
 * The line a finished turn's folded steps show: how many attempts ("3 attempts"), and
 * whether the turn started over with remembered answers.
 */
export function stepsSummary(turn: Turn): string {
  const attempts = turn.steps.filter(s => s.kind === 'attempt').length;
  let text = attempts
    ? `${attempts} attempt${attempts === 1 ? '' : 's'}`
    : `${turn.steps.length} step${turn.steps.length === 1 ? '' : 's'}`;
  const memory = turn.steps.find(s => s.kind === 'note' && typeof s.examples === 'number');
  if (memory) {
    const n = memory.examples ?? 0;
    text += ` · asked again with ${n} remembered answer${n === 1 ? '' : 's'}`;
    if (turn.steps.some(s => s.kind === 'note' && s.keptFirst)) {
      text += ', first answer kept';
    }
  }
  return text;
}

/**
 * Short text of an attempt / reply / note step, as the panel shows it: the kernel's label
 * (sqlnb.labels, the words the terminal and the chat widget show too). A step without one
 * (saved by an older panel, or from a kernel without the `labels` feature) keeps the
 * panel's older wording below.
 */
export function stepLabel(step: Step): string {
  if (step.label) {
    return step.label;
  }
  if (step.kind === 'attempt') {
    const of = step.max ? ` of ${step.max}` : '';
    const cands = step.candidates && step.candidates > 1 ? ` (${step.candidates} candidates tried)` : '';
    if (step.ok) {
      const rows =
        step.rowCount === null || step.rowCount === undefined
          ? 'ran'
          : `${step.rowCount}${step.truncated ? '+' : ''} row${step.rowCount === 1 ? '' : 's'}`;
      return `Attempt ${step.n ?? '?'}${of}: ✓ ${rows}${cands}`;
    }
    const kind = step.errorKind ? `${step.errorKind}: ` : '';
    return `Attempt ${step.n ?? '?'}${of}: ✗ ${kind}${step.error ?? 'failed'}${cands}`;
  }
  if (step.kind === 'reply') {
    const cands = step.candidates && step.candidates > 1 ? ` (${step.candidates} candidates)` : '';
    return `${step.text ?? 'The model replied'}${cands}`;
  }
  return step.text ?? '';
}

/** The message shown in `.sqlnb-error` for a turn that did not succeed. */
export function turnErrorText(turn: Turn): string | null {
  if (turn.status === 'running' || turn.status === 'success' || turn.status === 'needs_clarification') {
    return null;
  }
  if (!turn.error) {
    return turn.status === 'stopped' ? 'Stopped.' : 'No answer.';
  }
  return withHint(turn.error.message, turn.error.hint);
}

/**
 * What changed in a conversation: every turn (loaded, cleared, or one dropped), a turn
 * added, a turn updated, or a running turn's live line only (a phase or the model's text;
 * the chat model gives each kind its own signal, so a view redraws what changed).
 */
export type ConversationChange =
  | { kind: 'reset' }
  | { kind: 'added'; turn: Turn }
  | { kind: 'updated'; turn: Turn; previous: Turn }
  | { kind: 'live'; turn: Turn };

/**
 * The turns of one notebook, updated in place; `onChange` listeners hear of
 * every change, with its kind.
 */
export class Conversation {
  private _turns: Turn[] = [];
  private _listeners = new Set<(change: ConversationChange) => void>();
  /** run ids of this conversation's runs (done or not) */
  private _runs = new Map<string, string>();

  constructor(turns: Turn[] = []) {
    this._turns = turns;
  }

  get turns(): ReadonlyArray<Turn> {
    return this._turns;
  }

  /** The turn still waiting for its `done`, if any. */
  get running(): Turn | null {
    return this._turns.find(t => t.status === 'running') ?? null;
  }

  onChange(fn: (change: ConversationChange) => void): () => void {
    this._listeners.add(fn);
    return () => this._listeners.delete(fn);
  }

  private _emit(change: ConversationChange): void {
    for (const fn of [...this._listeners]) {
      fn(change);
    }
  }

  /** Replace every turn (loaded from metadata). */
  reset(turns: Turn[]): void {
    this._turns = turns;
    this._runs.clear();
    this._emit({ kind: 'reset' });
  }

  /** A new running turn for a question. */
  start(question: string, connection: string | null, followUp = false): Turn {
    const turn = newTurn(question, connection, followUp);
    this._turns = [...this._turns, turn];
    this._emit({ kind: 'added', turn });
    return turn;
  }

  /** Drop a turn whose ask never started (the question goes back to the box). */
  remove(turnId: string): void {
    this._turns = this._turns.filter(t => t.id !== turnId);
    this._emit({ kind: 'reset' });
  }

  find(turnId: string): Turn | null {
    return this._turns.find(t => t.id === turnId) ?? null;
  }

  hasRun(run: string): boolean {
    return this._runs.has(run);
  }

  bindRun(turnId: string, run: string): void {
    this._runs.set(run, turnId);
    this._update(turnId, t => ({ ...t, run }));
  }

  /** Add a page of the turn's result rows (the `rows` request's reply). */
  addRows(turnId: string, offset: number, rows: unknown[][], rowCount: number): void {
    this._update(turnId, t => withMoreRows(t, offset, rows, rowCount));
  }

  /** Reduce one event of a run of this conversation; returns the turn or null. */
  applyEvent(run: string, event: RunEvent, rowsShown: number): Turn | null {
    const turnId = this._runs.get(run);
    if (!turnId) {
      return null;
    }
    return this._update(turnId, t => (isFinished(t) ? t : applyEvent(t, event, rowsShown)));
  }

  /** The user picked the turn's `index`-th other reading as its answer. */
  pickAlternative(turnId: string, index: number): Turn | null {
    return this._update(turnId, t => pickAlternative(t, index));
  }

  /** Change a turn's remember state (the thumbs-up); returns the turn or null. */
  setRemember(
    turnId: string,
    patch: Partial<Pick<Turn, 'remembered' | 'remembering' | 'rememberError'>>
  ): Turn | null {
    return this._update(turnId, t => ({ ...t, ...patch }));
  }

  /** End a turn (or every running turn) locally with an error. */
  fail(info: ErrorInfo, turnId?: string): void {
    for (const t of this._turns) {
      if (t.status === 'running' && (turnId === undefined || t.id === turnId)) {
        this._update(t.id, x => failTurn(x, info));
      }
    }
  }

  private _update(turnId: string, fn: (t: Turn) => Turn): Turn | null {
    const i = this._turns.findIndex(t => t.id === turnId);
    if (i < 0) {
      return null;
    }
    const previous = this._turns[i];
    const next = fn(previous);
    if (next !== previous) {
      this._turns = [...this._turns.slice(0, i), next, ...this._turns.slice(i + 1)];
      this._emit(
        onlyLiveChanged(previous, next)
          ? { kind: 'live', turn: next }
          : { kind: 'updated', turn: next, previous }
      );
    }
    return next;
  }
}
