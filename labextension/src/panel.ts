/**
 * The sidebar view: renders the current notebook's NotebookChat and turns
 * the user's clicks into model calls. Plain DOM; the class names are the
 * contract the browser tests rely on.
 */
import { Clipboard, Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';
import { NotebookChat, SqlnbModel } from './model';
import {
  alternativeText,
  answerSql,
  Step,
  stepLabel,
  stepsSummary,
  Turn,
  turnErrorText
} from './core/conversation';
import {
  confidenceAriaLabel,
  confidenceLabel,
  confidenceReasons,
  confidenceTooltip
} from './core/confidence';
import {
  Confidence,
  describeError,
  ErrorInfo,
  RequestError,
  TableInfo,
  writeAccessIndicator
} from './core/protocol';
import { tokenize } from './core/highlight';

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function button(cls: string, label: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', `jp-Button sqlnb-button ${cls}`, label);
  b.type = 'button';
  b.title = title;
  b.addEventListener('click', e => {
    e.preventDefault();
    onClick();
  });
  return b;
}

/** A thumbs-up icon (Material Design's "thumb_up", Apache 2.0) in the text colour. */
function thumbsUpIcon(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.classList.add('sqlnb-thumbs-up');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('fill', 'currentColor');
  path.setAttribute(
    'd',
    'M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z'
  );
  svg.appendChild(path);
  return svg;
}

/** SQL as highlighted spans (plain text content = the SQL). */
export function sqlBlock(sql: string, cls = 'sqlnb-sql'): HTMLElement {
  const pre = el('pre', cls);
  for (const tok of tokenize(sql)) {
    if (tok.type === 'space' || tok.type === 'identifier' || tok.type === 'punct') {
      pre.appendChild(document.createTextNode(tok.text));
    } else {
      pre.appendChild(el('span', `sqlnb-tok-${tok.type}`, tok.text));
    }
  }
  return pre;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) {
    return 'NULL';
  }
  if (typeof v === 'object') {
    return JSON.stringify(v);
  }
  return String(v);
}

export class ChatPanel extends Widget {
  constructor(model: SqlnbModel) {
    super();
    this._model = model;
    this.id = 'sqlnb-chat-panel';
    this.addClass('sqlnb-panel');
    this.title.caption = 'sqlnb';
    this.title.label = 'sqlnb';
    this._build();
    model.currentChanged.connect(this._onCurrentChanged, this);
    this._onCurrentChanged();
  }

  protected onAfterShow(): void {
    this._model.current?.activate();
  }

  /** Put the question box's focus (used by the open command). */
  focusInput(): void {
    this._input.focus();
  }

  private _build(): void {
    const node = this.node;
    const header = el('div', 'sqlnb-header');
    this._notebookLabel = el('div', 'sqlnb-notebook');
    const bannerRow = el('div', 'sqlnb-banner-row');
    this._banner = el('div', 'sqlnb-banner');
    this._banner.setAttribute('role', 'status');
    this._banner.setAttribute('aria-live', 'polite');
    this._bannerAction = el('div', 'sqlnb-banner-action');
    bannerRow.append(this._banner, this._bannerAction);

    const connRow = el('div', 'sqlnb-connection-row');
    const label = el('label', 'sqlnb-label', 'Connection');
    this._select = el('select', 'sqlnb-connections');
    this._select.id = 'sqlnb-connections-select';
    this._select.setAttribute('aria-label', 'Connection sqlnb asks about');
    label.htmlFor = this._select.id;
    this._select.title = "The connection sqlnb asks about (the notebook's active one, as %sqlnb use NAME)";
    this._select.addEventListener('change', () => {
      const chat = this._chat;
      if (chat && this._select.value && this._select.value !== chat.active) {
        void chat.useConnection(this._select.value);
      }
    });
    this._refresh = button('sqlnb-refresh-schema', '⟳', 'Reload the tables of this connection', () => {
      void this._chat?.loadSchema(true);
    });
    connRow.append(label, this._select, this._refresh);
    // what the active connection's credentials may write: a few words, the full
    // sentence as the tooltip (the kernel finds it on connect)
    this._access = el('div', 'sqlnb-write-access');
    this._access.setAttribute('role', 'note');
    this._access.style.display = 'none';

    const schemaBox = el('details', 'sqlnb-schema-box');
    this._schemaBox = schemaBox;
    schemaBox.open = true;
    const summary = el('summary', 'sqlnb-schema-summary', 'Tables');
    this._schema = el('div', 'sqlnb-schema');
    schemaBox.append(summary, this._schema);
    header.append(this._notebookLabel, bannerRow, connRow, this._access, schemaBox);

    this._turns = el('div', 'sqlnb-turns');

    const compose = el('div', 'sqlnb-compose');
    this._input = el('textarea', 'jp-mod-styled sqlnb-question-input');
    this._input.rows = 3;
    this._input.setAttribute('aria-label', 'Question for sqlnb');
    this._input.placeholder = 'Ask a question about your data (Enter sends, Shift+Enter for a new line)';
    this._input.addEventListener('keydown', e => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        e.stopPropagation();
        void this._send();
      }
    });
    this._input.addEventListener('input', () => {
      if (this._chat) {
        this._chat.draft = this._input.value;
      }
      this._updateButtons();
    });
    const buttons = el('div', 'sqlnb-compose-buttons');
    this._clear = button(
      'sqlnb-new',
      'New conversation',
      "Forget this notebook's conversation and start a new one",
      () => {
        const chat = this._chat;
        if (!chat) {
          return;
        }
        void showDialog({
          title: 'Start a new conversation?',
          body: 'sqlnb forgets the questions and answers of this notebook (they are removed from its metadata); the next question starts afresh. Cells already inserted stay.',
          buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'New conversation' })]
        }).then(result => {
          if (result.button.accept) {
            chat.clear();
          }
        });
      }
    );
    this._stop = button('sqlnb-stop', 'Stop', 'Stop the answer being written', () => {
      void this._chat?.stop();
    });
    this._sendBtn = button('jp-mod-accept sqlnb-send', 'Ask', 'Ask (Enter)', () => void this._send());
    buttons.append(this._clear, el('span', 'sqlnb-spacer'), this._stop, this._sendBtn);
    compose.append(this._input, buttons);

    node.append(header, this._turns, compose);
  }

  private _onCurrentChanged(): void {
    const next = this._model.current;
    if (next === this._chat) {
      return;
    }
    if (this._chat && !this._chat.isDisposed) {
      this._chat.draft = this._input.value;
      this._chat.changed.disconnect(this._renderHeader, this);
      this._chat.turnChanged.disconnect(this._onTurnChanged, this);
    }
    this._chat = next;
    this._schemaFilter = '';
    if (next) {
      next.changed.connect(this._renderHeader, this);
      next.turnChanged.connect(this._onTurnChanged, this);
      this._input.value = next.draft;
      if (this.isVisible) {
        next.activate();
      }
    } else {
      this._input.value = '';
    }
    this._renderHeader();
    this._renderTurns();
  }

  private _onTurnChanged(_: NotebookChat, turn: Turn | null): void {
    if (turn === null) {
      this._renderTurns();
      return;
    }
    const old = this._turnNodes.get(turn.id);
    const fresh = this._renderTurn(turn);
    this._turnNodes.set(turn.id, fresh);
    if (old && old.parentNode === this._turns) {
      // what the reader opened stays open (e.g. the reasons, when the thumbs-up is pressed)
      for (const cls of ['sqlnb-steps-box', 'sqlnb-confidence']) {
        const was = old.querySelector<HTMLDetailsElement>(`details.${cls}`);
        const now = fresh.querySelector<HTMLDetailsElement>(`details.${cls}`);
        if (was && now) {
          now.open = was.open;
        }
      }
      this._turns.replaceChild(fresh, old);
    } else {
      this._turns.querySelector('.sqlnb-empty')?.remove();
      this._turns.appendChild(fresh);
      // a new turn closes the clarification box of the turn before it
      const turns = this._chat?.conversation.turns ?? [];
      const prev = turns[turns.length - 2];
      const prevNode = prev ? this._turnNodes.get(prev.id) : undefined;
      if (prev && prevNode && prev.status === 'needs_clarification' && prevNode.parentNode === this._turns) {
        const again = this._renderTurn(prev);
        this._turnNodes.set(prev.id, again);
        this._turns.replaceChild(again, prevNode);
      }
    }
    this._scrollDown();
    this._updateButtons();
  }

  private _renderHeader(): void {
    const chat = this._chat;
    this._bannerAction.textContent = '';
    if (!chat) {
      this._notebookLabel.textContent = '';
      this._setBanner({ text: 'Open a notebook to ask sqlnb about its database.', error: false });
      this._renderConnections();
      this._renderSchema();
      this._updateButtons();
      return;
    }
    this._notebookLabel.textContent = chat.title;
    this._notebookLabel.title = chat.path;
    const banner = chat.banner;
    this._setBanner(banner);
    if (banner.action) {
      const label = banner.action === 'use_here' ? 'Use here' : 'Retry';
      this._bannerAction.appendChild(
        button(
          'sqlnb-reconnect',
          label,
          'Connect this panel to the kernel again',
          () => void chat.reconnect()
        )
      );
    }
    this._renderConnections();
    this._renderSchema();
    this._updateButtons();
  }

  private _setBanner(b: { text: string; error: boolean }): void {
    this._banner.textContent = b.text;
    this._banner.classList.toggle('sqlnb-banner-error', b.error);
  }

  private _renderConnections(): void {
    const chat = this._chat;
    const select = this._select;
    // unchanged: leave the element alone (an open drop-down stays open)
    const key = [chat, chat?.isReady, chat?.active, chat?.connections, chat?.running?.id];
    if (this._connKey && key.every((v, i) => v === this._connKey![i])) {
      return;
    }
    this._connKey = key;
    select.textContent = '';
    const conns = chat?.isReady ? chat.connections : [];
    if (!conns.length) {
      const opt = el('option', '', chat?.isReady ? 'no connection' : '—');
      opt.value = '';
      select.appendChild(opt);
    }
    for (const c of conns) {
      const opt = el('option', '', `${c.name} · ${c.engine} · ${c.url}`);
      opt.value = c.name;
      opt.title = c.readonly ? `${c.url} (read-only)` : c.url;
      select.appendChild(opt);
    }
    select.value = chat?.active ?? '';
    select.disabled = !conns.length || !!chat?.running;
    this._refresh.disabled = !chat?.active || !chat?.isReady;
    this._renderWriteAccess(conns.find(c => c.name === chat?.active)?.write_access);
  }

  private _renderWriteAccess(info: Parameters<typeof writeAccessIndicator>[0]): void {
    const node = this._access;
    const shown = writeAccessIndicator(info);
    node.classList.remove(
      'sqlnb-write-access-read-only',
      'sqlnb-write-access-writable',
      'sqlnb-write-access-unknown'
    );
    if (!shown) {
      node.style.display = 'none';
      node.textContent = '';
      node.title = '';
      node.removeAttribute('aria-label');
      return;
    }
    node.style.display = '';
    node.textContent = shown.text;
    node.title = shown.title;
    node.setAttribute('aria-label', shown.title);
    node.dataset.state = shown.state;
    node.classList.add(`sqlnb-write-access-${shown.state}`);
  }

  private _renderSchema(): void {
    const chat = this._chat;
    const box = this._schema;
    // unchanged: leave the list alone (the filter keeps its focus, a kernel busy/idle
    // change re-renders nothing)
    const key = [chat, chat?.isReady, chat?.active, chat?.schema, chat?.schemaLoading, chat?.schemaError];
    if (this._schemaKey && key.every((v, i) => v === this._schemaKey![i])) {
      return;
    }
    this._schemaKey = key;
    const open = new Set<string>();
    box.querySelectorAll('.sqlnb-schema-table.sqlnb-open').forEach(n => {
      open.add((n as HTMLElement).dataset.name ?? '');
    });
    box.textContent = '';
    const shown = !!chat && chat.isReady && !!chat.active;
    this._schemaBox.style.display = shown ? '' : 'none';
    if (!chat || !shown) {
      return;
    }
    if (chat.schemaLoading && !chat.schema) {
      box.appendChild(el('div', 'sqlnb-muted', 'Reading the tables…'));
      return;
    }
    if (chat.schemaError) {
      box.appendChild(el('div', 'sqlnb-muted sqlnb-schema-error', chat.schemaError));
      return;
    }
    const schema = chat.schema;
    if (!schema) {
      return;
    }
    if (!schema.tables.length) {
      box.appendChild(el('div', 'sqlnb-muted', 'No tables in this connection.'));
      return;
    }
    const list = el('ul', 'sqlnb-schema-tables');
    for (const t of schema.tables) {
      list.appendChild(this._renderTable(t, open.has(t.name)));
    }
    if (schema.tables.length > 8) {
      // many tables: a filter on table and column names
      const filter = el('input', 'jp-mod-styled sqlnb-schema-filter');
      filter.type = 'search';
      filter.placeholder = `Filter ${schema.tables.length} tables`;
      filter.setAttribute('aria-label', 'Filter the tables');
      filter.value = this._schemaFilter;
      const apply = () => {
        this._schemaFilter = filter.value;
        const q = filter.value.trim().toLowerCase();
        list.querySelectorAll<HTMLElement>('.sqlnb-schema-table').forEach((li, i) => {
          const t = schema.tables[i];
          const hit =
            !q ||
            t.name.toLowerCase().includes(q) ||
            (t.columns ?? []).some(c => c.name.toLowerCase().includes(q));
          li.style.display = hit ? '' : 'none';
        });
      };
      filter.addEventListener('input', apply);
      box.appendChild(filter);
      apply();
    }
    box.appendChild(list);
  }

  private _renderTable(t: TableInfo, open: boolean): HTMLElement {
    const li = el('li', 'sqlnb-schema-table');
    li.dataset.name = t.name;
    const row = el('div', 'sqlnb-schema-row');
    const caret = el('span', 'sqlnb-caret', open ? '▾' : '▸');
    const name = el('span', 'sqlnb-schema-name', t.name);
    name.title = `Insert ${t.name} into the question${t.comment ? ` — ${t.comment}` : ''}`;
    const kind = el('span', 'sqlnb-muted sqlnb-schema-kind', t.kind && t.kind !== 'table' ? t.kind : '');
    row.append(caret, name, kind);
    const cols = el('ul', 'sqlnb-schema-columns');
    for (const c of t.columns ?? []) {
      const ci = el('li', 'sqlnb-schema-column');
      ci.dataset.name = c.name;
      const cn = el('span', 'sqlnb-schema-name', c.name);
      cn.title = `Insert ${c.name} into the question`;
      ci.append(cn, el('span', 'sqlnb-muted sqlnb-schema-type', c.type ?? ''));
      if (c.pk) {
        ci.appendChild(el('span', 'sqlnb-key sqlnb-pk', 'PK'));
      }
      if (c.fk) {
        ci.appendChild(el('span', 'sqlnb-key sqlnb-fk', `FK → ${c.fk}`));
      }
      cols.appendChild(ci);
    }
    li.append(row, cols);
    li.classList.toggle('sqlnb-open', open);
    row.addEventListener('click', e => {
      if ((e.target as HTMLElement).classList.contains('sqlnb-schema-name')) {
        this._insertText(t.name);
        return;
      }
      const now = !li.classList.contains('sqlnb-open');
      li.classList.toggle('sqlnb-open', now);
      caret.textContent = now ? '▾' : '▸';
    });
    cols.addEventListener('click', e => {
      const target = e.target as HTMLElement;
      if (target.classList.contains('sqlnb-schema-name')) {
        this._insertText(target.textContent ?? '');
      }
    });
    return li;
  }

  /** Insert a name into the question box at the cursor. */
  private _insertText(text: string): void {
    const input = this._input;
    const start = input.selectionStart ?? input.value.length;
    const end = input.selectionEnd ?? start;
    const before = input.value.slice(0, start);
    const pad = before && !/\s$/.test(before) ? ' ' : '';
    input.setRangeText(pad + text, start, end, 'end');
    if (this._chat) {
      this._chat.draft = input.value;
    }
    input.focus();
    this._updateButtons();
  }

  private _renderTurns(): void {
    this._turns.textContent = '';
    this._turnNodes.clear();
    const chat = this._chat;
    if (!chat) {
      return;
    }
    if (!chat.conversation.turns.length) {
      this._turns.appendChild(
        el(
          'div',
          'sqlnb-empty sqlnb-muted',
          'Ask a question about the data of the active connection. sqlnb writes the SQL, runs it, fixes it when it fails, and gives you a %%sql cell.'
        )
      );
    }
    for (const t of chat.conversation.turns) {
      const node = this._renderTurn(t);
      this._turnNodes.set(t.id, node);
      this._turns.appendChild(node);
    }
    this._scrollDown();
    this._updateButtons();
  }

  private _renderTurn(turn: Turn): HTMLElement {
    const chat = this._chat!;
    const node = el('div', 'sqlnb-turn');
    node.dataset.turn = turn.id;
    if (turn.status !== 'running') {
      node.dataset.status = turn.status;
    } else {
      node.classList.add('sqlnb-running');
    }
    const q = el('div', 'sqlnb-user-question', turn.question);
    if (turn.followUp) {
      q.classList.add('sqlnb-follow-up');
    }
    if (turn.connection) {
      q.title = `Asked about ${turn.connection}`;
    }
    node.appendChild(q);

    const steps = el('div', 'sqlnb-steps');
    for (const s of turn.steps) {
      steps.appendChild(this._renderStep(s));
    }
    if (turn.status === 'running') {
      steps.appendChild(
        el('div', 'sqlnb-thinking sqlnb-muted', turn.steps.length ? 'Working…' : 'Waiting for the kernel…')
      );
    }
    // the steps fold away once the answer is there
    if (turn.status !== 'running' && turn.steps.length) {
      const det = el('details', 'sqlnb-steps-box');
      det.appendChild(el('summary', 'sqlnb-muted', stepsSummary(turn)));
      det.appendChild(steps);
      node.appendChild(det);
    } else {
      node.appendChild(steps);
    }

    if (turn.status === 'success' && turn.sql) {
      node.appendChild(this._renderAnswer(chat, turn));
    } else if (turn.status === 'needs_clarification') {
      if (answerSql(turn)) {
        // the best query found before the model asked back: usable as it is
        node.appendChild(this._renderAnswer(chat, turn));
      }
      node.appendChild(this._renderClarify(chat, turn));
    }
    const err = turnErrorText(turn);
    if (err) {
      node.appendChild(el('div', 'sqlnb-error', err));
    }
    return node;
  }

  private _renderStep(s: Step): HTMLElement {
    const node = el('div', 'sqlnb-step');
    node.dataset.kind = s.kind;
    if (s.kind === 'attempt') {
      node.dataset.ok = s.ok ? 'true' : 'false';
    }
    node.appendChild(el('div', 'sqlnb-step-label', stepLabel(s)));
    if (s.sql && s.kind === 'attempt') {
      node.appendChild(sqlBlock(s.sql, 'sqlnb-step-sql'));
    }
    return node;
  }

  private _renderAnswer(chat: NotebookChat, turn: Turn): HTMLElement {
    const box = el('div', 'sqlnb-answer');
    const best = turn.status === 'needs_clarification';
    if (turn.explanation) {
      box.appendChild(el('p', 'sqlnb-explanation', turn.explanation));
    }
    if (best || turn.confidence) {
      const head = el('div', 'sqlnb-answer-head');
      if (best) {
        head.appendChild(el('span', 'sqlnb-muted sqlnb-best-so-far', 'Best guess:'));
      }
      if (turn.confidence) {
        head.appendChild(this._renderConfidence(turn.confidence));
      }
      box.appendChild(head);
    }
    box.appendChild(sqlBlock(answerSql(turn) ?? ''));
    if (turn.columns.length) {
      const wrap = el('div', 'sqlnb-result-wrap');
      const table = el('table', 'sqlnb-result');
      const head = el('tr');
      for (const c of turn.columns) {
        head.appendChild(el('th', '', c));
      }
      const thead = el('thead');
      thead.appendChild(head);
      const tbody = el('tbody');
      for (const r of turn.rows) {
        const tr = el('tr');
        for (let i = 0; i < turn.columns.length; i++) {
          const v = r[i];
          tr.appendChild(el('td', v === null ? 'sqlnb-null' : '', cellText(v)));
        }
        tbody.appendChild(tr);
      }
      table.append(thead, tbody);
      wrap.appendChild(table);
      box.appendChild(wrap);
      const total = turn.rowCount ?? turn.rows.length;
      box.appendChild(
        el(
          'div',
          'sqlnb-muted sqlnb-row-count',
          total > turn.rows.length
            ? `${turn.rows.length} of ${total} rows`
            : `${total} row${total === 1 ? '' : 's'}`
        )
      );
    }
    const actions = el('div', 'sqlnb-actions');
    const source = turn.cell ?? turn.sql ?? '';
    const insert = (run: boolean) => {
      void chat.insertCell(source, run).then(ok => {
        if (!ok) {
          chat.setNotice({ text: 'The notebook this answer belongs to is closed.', error: true });
        }
      });
    };
    actions.append(
      button('sqlnb-insert', 'Insert', 'Insert a %%sql cell below the active cell', () => insert(false)),
      button('sqlnb-insert-run', 'Insert and run', 'Insert the cell below the active cell and run it', () =>
        insert(true)
      ),
      button('sqlnb-copy', 'Copy', 'Copy the cell source', () => Clipboard.copyToSystem(source)),
      el('span', 'sqlnb-spacer'),
      this._renderRemember(chat, turn)
    );
    box.appendChild(actions);
    if (turn.alternatives.length) {
      box.appendChild(this._renderAlternatives(chat, turn));
    }
    if (turn.rememberError) {
      const err = el('div', 'sqlnb-error sqlnb-remember-error', turn.rememberError);
      err.setAttribute('role', 'alert');
      box.appendChild(err);
    }
    return box;
  }

  /** The other results the drafts gave, folded: each with its SQL, first rows and a
   * button that inserts its cell instead of the answer's. */
  private _renderAlternatives(chat: NotebookChat, turn: Turn): HTMLElement {
    const n = turn.alternatives.length;
    const det = el('details', 'sqlnb-alternatives');
    det.appendChild(
      el('summary', 'sqlnb-muted', `The drafts also gave ${n} other result${n === 1 ? '' : 's'}`)
    );
    turn.alternatives.forEach((alt, index) => {
      const item = el('div', 'sqlnb-alternative');
      item.appendChild(el('div', 'sqlnb-alternative-label', `${index + 1}. ${alternativeText(alt)}`));
      item.appendChild(sqlBlock(alt.sql));
      if (alt.columns.length && alt.rows.length) {
        const table = el('table', 'sqlnb-result');
        const head = el('tr');
        for (const c of alt.columns) {
          head.appendChild(el('th', '', c));
        }
        const thead = el('thead');
        thead.appendChild(head);
        const tbody = el('tbody');
        for (const r of alt.rows) {
          const tr = el('tr');
          for (let i = 0; i < alt.columns.length; i++) {
            tr.appendChild(el('td', r[i] === null ? 'sqlnb-null' : '', cellText(r[i])));
          }
          tbody.appendChild(tr);
        }
        table.append(thead, tbody);
        const wrap = el('div', 'sqlnb-result-wrap');
        wrap.appendChild(table);
        item.appendChild(wrap);
      }
      item.appendChild(
        button(
          'sqlnb-use-alternative',
          'Use this',
          'Take this reading as the answer and insert its %%sql cell',
          () => {
            void chat.useAlternative(turn.id, index).then(ok => {
              if (!ok) {
                chat.setNotice({ text: 'The notebook this answer belongs to is closed.', error: true });
              }
            });
          }
        )
      );
      det.appendChild(item);
    });
    return det;
  }

  /** The confidence badge: the level, the reasons on hover and on expand. */
  private _renderConfidence(c: Confidence): HTMLElement {
    const label = confidenceLabel(c);
    const reasons = confidenceReasons(c);
    if (!reasons.length) {
      const badge = el('span', 'sqlnb-confidence sqlnb-confidence-badge', label);
      badge.dataset.level = c.level;
      badge.setAttribute('role', 'note');
      badge.setAttribute('aria-label', confidenceAriaLabel(c));
      badge.title = confidenceTooltip(c);
      return badge;
    }
    const det = el('details', 'sqlnb-confidence');
    det.dataset.level = c.level;
    const summary = el('summary', 'sqlnb-confidence-badge', label);
    summary.setAttribute('aria-label', confidenceAriaLabel(c));
    summary.title = confidenceTooltip(c);
    const list = el('ul', 'sqlnb-confidence-reasons');
    for (const r of reasons) {
      list.appendChild(el('li', 'sqlnb-confidence-reason', r));
    }
    det.append(summary, list);
    return det;
  }

  /** The thumbs-up: remember this answer (pressed once it is remembered). */
  private _renderRemember(chat: NotebookChat, turn: Turn): HTMLElement {
    const remembered = turn.remembered !== null;
    const b = button(
      'sqlnb-remember',
      remembered ? 'Remembered' : turn.remembering ? '…' : '',
      remembered
        ? 'Remembered: sqlnb shows this question and its SQL to the model as an example for similar questions'
        : 'Remember this answer: sqlnb shows this question and its SQL to the model as an example for similar questions',
      () => void chat.remember(turn.id)
    );
    b.prepend(thumbsUpIcon());
    b.setAttribute('aria-label', remembered ? 'Remembered' : 'Remember this answer');
    b.setAttribute('aria-pressed', remembered ? 'true' : 'false');
    b.classList.toggle('sqlnb-remembered', remembered);
    if (turn.remembering) {
      b.disabled = true;
      b.setAttribute('aria-busy', 'true');
    }
    return b;
  }

  private _renderClarify(chat: NotebookChat, turn: Turn): HTMLElement {
    const box = el('div', 'sqlnb-clarify');
    box.appendChild(el('div', 'sqlnb-muted', 'sqlnb needs to know:'));
    const list = el('ul', 'sqlnb-clarify-questions');
    for (const q of turn.questions) {
      list.appendChild(el('li', 'sqlnb-clarify-question', q));
    }
    box.appendChild(list);
    const last = chat.conversation.turns[chat.conversation.turns.length - 1];
    if (last && last.id === turn.id) {
      const input = el('textarea', 'jp-mod-styled sqlnb-clarify-input');
      input.rows = 2;
      input.placeholder = 'Your answer (Enter sends)';
      input.value = this._clarifyDrafts.get(turn.id) ?? '';
      input.addEventListener('input', () => this._clarifyDrafts.set(turn.id, input.value));
      const send = button('jp-mod-accept sqlnb-clarify-send', 'Answer', 'Send the answer', () => {
        const text = input.value.trim();
        if (!text || chat.running) {
          return;
        }
        send.disabled = true;
        // kept until the answer is on its way: a failed start re-renders this box with it
        this._clarifyDrafts.set(turn.id, text);
        chat.ask(text, true).then(
          () => this._clarifyDrafts.delete(turn.id),
          e => {
            send.disabled = false;
            this._showError(chat, e);
          }
        );
      });
      input.addEventListener('keydown', e => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          e.stopPropagation();
          send.click();
        }
      });
      box.append(input, send);
    }
    return box;
  }

  private async _send(): Promise<void> {
    const chat = this._chat;
    const text = this._input.value.trim();
    if (!chat || !text || this._sending) {
      return;
    }
    if (chat.running) {
      // the question stays in the box for later
      chat.setNotice({
        text: 'A question is still being answered; wait for it or press Stop.',
        error: false
      });
      return;
    }
    this._sending = true;
    this._input.value = '';
    chat.draft = '';
    this._updateButtons();
    try {
      await chat.ask(text);
    } catch (e) {
      // never lose the question: put it back
      if (this._chat === chat) {
        const now = this._input.value;
        this._input.value = now.trim() ? `${text}\n${now}` : text;
        chat.draft = this._input.value;
      } else {
        chat.draft = text;
      }
      this._showError(chat, e);
    } finally {
      this._sending = false;
      this._updateButtons();
    }
  }

  private _showError(chat: NotebookChat, e: unknown): void {
    const info: ErrorInfo = e instanceof RequestError ? e.info : { kind: 'error', message: String(e) };
    chat.setNotice({ text: describeError(info), error: true });
  }

  private _updateButtons(): void {
    const chat = this._chat;
    const running = !!chat?.running;
    const busy = running || this._sending;
    this._sendBtn.disabled = !chat || busy || !this._input.value.trim();
    this._stop.style.display = running ? '' : 'none';
    this._stop.disabled = !running || !chat?.running?.run;
    this._clear.disabled = !chat || busy || !chat.conversation.turns.length;
    this._input.disabled = !chat;
    this._select.disabled = !chat?.connections.length || running;
  }

  private _scrollDown(): void {
    this._turns.scrollTop = this._turns.scrollHeight;
  }

  private _model: SqlnbModel;
  private _chat: NotebookChat | null = null;
  private _sending = false;
  private _turnNodes = new Map<string, HTMLElement>();
  private _clarifyDrafts = new Map<string, string>();
  private _schemaFilter = '';
  private _connKey: unknown[] | null = null;
  private _schemaKey: unknown[] | null = null;
  private _notebookLabel!: HTMLElement;
  private _banner!: HTMLElement;
  private _bannerAction!: HTMLElement;
  private _select!: HTMLSelectElement;
  private _refresh!: HTMLButtonElement;
  private _access!: HTMLElement;
  private _schema!: HTMLElement;
  private _schemaBox!: HTMLDetailsElement;
  private _turns!: HTMLElement;
  private _input!: HTMLTextAreaElement;
  private _sendBtn!: HTMLButtonElement;
  private _stop!: HTMLButtonElement;
  private _clear!: HTMLButtonElement;
}
