/**
 * The sidebar view: renders the current notebook's NotebookChat and turns
 * the user's clicks into model calls. Plain DOM; the class names are the
 * contract the browser tests rely on.
 */
import { Clipboard, Dialog, showDialog } from '@jupyterlab/apputils';
import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';
import { NotebookChat, ROWS_PAGE, SqlnbModel } from './model';
import {
  alternativeText,
  answerSql,
  onlyLiveChanged,
  shownSql,
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
import { cellText, displayText, elapsedText } from './core/format';

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

/** The MIME type of a chart (JupyterLab draws Vega-Lite itself). */
const CHART_MIME = 'application/vnd.vegalite.v5+json';

export class ChatPanel extends Widget {
  constructor(model: SqlnbModel, rendermime: IRenderMimeRegistry | null = null) {
    super();
    this._model = model;
    this._rendermime = rendermime;
    this.id = 'sqlnb-chat-panel';
    this.addClass('sqlnb-panel');
    // the name the README and the command palette use
    this.title.caption = 'Ask sqlnb';
    this.title.label = 'Ask sqlnb';
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
    // a connect form when the kernel has no connection (Reconnect after a restart)
    this._connectBox = el('div', 'sqlnb-connect');
    header.append(this._notebookLabel, bannerRow, this._connectBox, connRow, this._access, schemaBox);

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
    // the session's questions so far: answered, attempts, time, tokens, cost
    this._footer = el('div', 'sqlnb-footer sqlnb-muted');
    compose.append(this._input, buttons, this._footer);

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
    // the tables fold away once a conversation has started: its answers come first
    this._schemaBox.open = !next?.conversation.turns.length;
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
    const prev = this._rendered.get(turn.id);
    this._rendered.set(turn.id, turn);
    const line = old?.querySelector('.sqlnb-live');
    if (old && prev && line && onlyLiveChanged(prev, turn)) {
      // the live line only (a phase, the model's text): redraw that line, not the turn
      line.replaceWith(this._renderLive(turn));
      this._scrollDown();
      return;
    }
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
    const answer =
      prev && prev.status === 'running' && turn.status !== 'running'
        ? fresh.querySelector('.sqlnb-answer')
        : null;
    if (answer) {
      // the answer has come: its start in view (its rows and chart below it), not the end
      answer.scrollIntoView({ block: 'start' });
    } else {
      this._scrollDown();
    }
    this._updateButtons();
  }

  private _renderHeader(): void {
    const chat = this._chat;
    this._bannerAction.textContent = '';
    if (!chat) {
      this._notebookLabel.textContent = '';
      this._footer.textContent = '';
      this._renderConnect(null);
      this._setBanner({ text: 'Open a notebook to ask sqlnb about its database.', error: false });
      this._renderConnections();
      this._renderSchema();
      this._updateButtons();
      return;
    }
    this._notebookLabel.textContent = chat.title;
    this._notebookLabel.title = chat.path;
    this._footer.textContent = chat.stats ?? '';
    this._footer.title = chat.stats ? "This kernel session's questions (%sqlnb stats tells more)" : '';
    this._renderConnect(chat);
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

  /**
   * The connect form, shown while the kernel is ready but has no connection: a URL or a
   * configured connection's name, a password for a URL without one (never shown, never
   * kept), and one Reconnect button per connection a kernel restart took.
   */
  private _renderConnect(chat: NotebookChat | null): void {
    const box = this._connectBox;
    const shown = !!chat && chat.isReady && !chat.connections.length;
    const again = shown ? chat!.reconnectable : [];
    const key = [chat, shown, again.map(r => r.name + r.url).join('|'), chat?.known.join('|')];
    if (this._connectKey && key.every((v, i) => v === this._connectKey![i])) {
      return; // unchanged: what the user typed stays
    }
    this._connectKey = key;
    box.textContent = '';
    if (!shown || !chat) {
      return;
    }
    const error = el('div', 'sqlnb-connect-error');
    error.setAttribute('role', 'alert');
    const form = el('form', 'sqlnb-connect-form');
    const target = el('input', 'jp-mod-styled sqlnb-connect-target');
    target.type = 'text';
    target.placeholder = chat.known.length
      ? 'A URL, or: ' + chat.known.join(', ')
      : 'duckdb:///sample.duckdb';
    target.setAttribute('aria-label', "A connection URL or a configured connection's name");
    target.autocomplete = 'off';
    target.spellcheck = false;
    if (chat.known.length) {
      const list = el('datalist');
      list.id = `sqlnb-known-${chat.panel.id}`;
      for (const name of chat.known) {
        const opt = el('option');
        opt.value = name;
        list.appendChild(opt);
      }
      target.setAttribute('list', list.id);
      form.appendChild(list);
    }
    const password = el('input', 'jp-mod-styled sqlnb-connect-password');
    password.type = 'password';
    password.placeholder = 'Password (if the URL needs one)';
    password.setAttribute('aria-label', 'Password for the URL (sent to the kernel only)');
    password.autocomplete = 'off';
    const submit = el('button', 'jp-Button sqlnb-button jp-mod-accept sqlnb-connect-submit', 'Connect');
    submit.type = 'submit';
    form.append(target, password, submit);
    // the name a Reconnect whose URL needs its password gives the connection again
    let named: { name: string; url: string } | null = null;
    const connect = async (to: string, pass?: string, name?: string) => {
      box.querySelectorAll('button').forEach(b => ((b as HTMLButtonElement).disabled = true));
      error.textContent = '';
      const failed = await chat.connect(to, {
        ...(pass ? { password: pass } : {}),
        ...(name ? { name } : {})
      });
      box.querySelectorAll('button').forEach(b => ((b as HTMLButtonElement).disabled = false));
      if (failed) {
        error.textContent = failed;
      } else {
        password.value = '';
      }
    };
    form.addEventListener('submit', e => {
      e.preventDefault();
      const to = target.value.trim();
      if (!to) {
        error.textContent =
          "Give a connection URL (duckdb:///file.duckdb) or a configured connection's name.";
        target.focus();
        return;
      }
      void connect(to, password.value, named && named.url === to ? named.name : undefined);
    });
    if (again.length) {
      const row = el('div', 'sqlnb-reconnect-row');
      for (const r of again) {
        row.appendChild(
          button('sqlnb-reconnect-one', `Reconnect ${r.name}`, `Open ${r.url} again as ${r.name}`, () => {
            if (r.target) {
              void connect(r.target, undefined, r.target === r.name ? undefined : r.name);
              return;
            }
            // its URL held a password: type it again (the kernel never sent it back)
            target.value = r.url.replace(/:\*\*\*@/, '@');
            named = { name: r.name, url: target.value };
            password.focus();
            error.textContent = `${r.name}'s password is needed again.`;
          })
        );
      }
      box.appendChild(row);
    }
    box.append(form, error);
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
    this._rendered.clear();
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
      this._rendered.set(t.id, t);
      this._turns.appendChild(node);
    }
    this._scrollDown();
    this._updateButtons();
  }

  /**
   * A running turn's live line: what it does now, the seconds since it started (kept
   * current by `_tick`), and the end of the model's text as it is written.
   */
  private _renderLive(turn: Turn): HTMLElement {
    const live = el('div', 'sqlnb-live');
    const head = el('div', 'sqlnb-thinking sqlnb-muted');
    head.appendChild(
      el(
        'span',
        'sqlnb-live-label',
        turn.live?.label ?? (turn.steps.length ? 'Working…' : 'Waiting for the kernel…')
      )
    );
    const clock = el('span', 'sqlnb-elapsed', elapsedText(turn.startedAt));
    if (turn.startedAt !== undefined) {
      clock.dataset.since = String(turn.startedAt);
    }
    head.appendChild(clock);
    live.appendChild(head);
    const text = turn.live?.text ?? '';
    if (text) {
      const pre = el('pre', 'sqlnb-live-text', text);
      live.appendChild(pre);
      requestAnimationFrame(() => {
        pre.scrollTop = pre.scrollHeight; // the newest words in view
      });
    }
    this._startTicking();
    return live;
  }

  /** Keep the running turns' elapsed seconds current (once a second, while any runs). */
  private _startTicking(): void {
    if (this._ticker !== null) {
      return;
    }
    this._ticker = window.setInterval(() => {
      const clocks = this._turns.querySelectorAll<HTMLElement>('.sqlnb-elapsed[data-since]');
      if (!clocks.length) {
        window.clearInterval(this._ticker!);
        this._ticker = null;
        return;
      }
      clocks.forEach(c => {
        c.textContent = elapsedText(Number(c.dataset.since));
      });
    }, 1000);
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
      steps.appendChild(this._renderLive(turn));
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

  /** The result's chart, drawn by JupyterLab's own Vega-Lite renderer. */
  private _renderChart(spec: Record<string, unknown>): HTMLElement {
    const det = el('details', 'sqlnb-chart');
    det.open = true;
    det.appendChild(el('summary', 'sqlnb-muted', 'Chart'));
    const host = el('div', 'sqlnb-chart-view');
    det.appendChild(host);
    const renderer = this._rendermime!.createRenderer(CHART_MIME);
    // as wide as the panel (the chart is drawn before it is on the page)
    const width = Math.max(160, this.node.clientWidth - 60);
    const sized = {
      ...spec,
      width,
      autosize: { type: 'fit', contains: 'padding' }
    } as ReadonlyPartialJSONObject;
    host.appendChild(renderer.node);
    void renderer.renderModel(new MimeModel({ data: { [CHART_MIME]: sized } })).catch(() => {
      host.textContent = 'The chart could not be drawn.';
    });
    return det;
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
    box.appendChild(sqlBlock(shownSql(turn) ?? ''));
    // what to do with the SQL comes right under it, before the rows and the chart (in view at 250 px)
    const actions = el('div', 'sqlnb-actions');
    const source = turn.cell ?? turn.sql ?? '';
    const insert = (run: boolean) => {
      void chat.insertCell(source, run, { end: true, focus: true }).then(ok => {
        if (!ok) {
          chat.setNotice({ text: 'The notebook this answer belongs to is closed.', error: true });
        }
      });
    };
    actions.append(
      button('sqlnb-insert', 'Insert', 'Add the %%sql cell at the end of the notebook', () => insert(false)),
      button(
        'sqlnb-insert-run',
        'Insert and run',
        'Add the %%sql cell at the end of the notebook and run it',
        () => insert(true)
      ),
      button('sqlnb-copy', 'Copy', 'Copy the cell source', () => Clipboard.copyToSystem(source)),
      ...(turn.chartCell
        ? [
            button(
              'sqlnb-insert-chart',
              'Insert chart',
              'Add a cell that runs the query and draws its chart',
              () => {
                void chat.insertCell(turn.chartCell!, false, { end: true, focus: true });
              }
            )
          ]
        : []),
      el('span', 'sqlnb-spacer'),
      this._renderRemember(chat, turn)
    );
    box.appendChild(actions);
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
          const shown = displayText(v);
          const td = el('td', v === null ? 'sqlnb-null' : '', shown.text);
          if (shown.full !== null) {
            td.title = shown.full; // the value as the database gave it
            td.classList.add('sqlnb-rounded');
          }
          tr.appendChild(td);
        }
        tbody.appendChild(tr);
      }
      table.append(thead, tbody);
      wrap.appendChild(table);
      box.appendChild(wrap);
      const total = turn.rowCount ?? turn.rows.length;
      const count = el(
        'div',
        'sqlnb-muted sqlnb-row-count',
        total > turn.rows.length
          ? `${turn.rows.length} of ${total} rows`
          : `${total} row${total === 1 ? '' : 's'}`
      );
      if (total > turn.rows.length) {
        // every row within reach: the next page from the result the kernel keeps
        const more = button(
          'sqlnb-more-rows',
          `Show ${Math.min(ROWS_PAGE, total - turn.rows.length)} more`,
          'Show more rows of the result',
          () => {
            more.disabled = true;
            void chat.loadMoreRows(turn.id).then(failed => {
              if (failed) {
                more.disabled = false;
                count.appendChild(el('span', 'sqlnb-error sqlnb-rows-error', failed));
              }
            });
          }
        );
        count.append(' ', more);
      }
      box.appendChild(count);
    }
    if (turn.chart && this._rendermime?.mimeTypes.includes(CHART_MIME)) {
      box.appendChild(this._renderChart(turn.chart));
    }
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
      item.appendChild(sqlBlock(alt.sql_pretty ?? alt.sql));
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
    this._schemaBox.open = false; // the answer comes first (the tables are one click away)
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

  dispose(): void {
    if (this._ticker !== null) {
      window.clearInterval(this._ticker);
      this._ticker = null;
    }
    super.dispose();
  }

  private _scrollDown(): void {
    this._turns.scrollTop = this._turns.scrollHeight;
  }

  private _model: SqlnbModel;
  private _chat: NotebookChat | null = null;
  private _sending = false;
  private _turnNodes = new Map<string, HTMLElement>();
  /** the turn each node was drawn from (to tell a live-line-only change) */
  private _rendered = new Map<string, Turn>();
  private _ticker: number | null = null;
  private _rendermime: IRenderMimeRegistry | null;
  private _footer!: HTMLElement;
  private _connectBox!: HTMLElement;
  private _connectKey: unknown[] | null = null;
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
