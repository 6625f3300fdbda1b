/**
 * The active connection's tables, folded under "Tables": a click on a table shows its
 * columns (types, keys), a click on a name puts it into the question; a filter on table and
 * column names when there are many. Shown while the kernel is ready with an active connection.
 */
import { caretDownIcon, caretRightIcon } from '@jupyterlab/ui-components';
import React, { useState } from 'react';
import type { NotebookChat } from '../chat';
import type { TableInfo } from '../core/protocol';
import { useSignal } from './hooks';

/** More tables than this: a filter. */
const FILTER_FROM = 8;

export function TableBrowser(props: {
  chat: NotebookChat | null;
  open: boolean;
  onToggle: (open: boolean) => void;
  onInsert: (name: string) => void;
}): JSX.Element {
  const { chat, open, onToggle, onInsert } = props;
  useSignal(chat?.connectionsChanged);
  useSignal(chat?.schemaChanged);
  const shown = !!chat && chat.isReady && !!chat.active;
  return (
    <details
      className="sqlnb-schema-box"
      open={open}
      onToggle={e => onToggle(e.currentTarget.open)}
      style={shown ? undefined : { display: 'none' }}
    >
      <summary className="sqlnb-schema-summary">Tables</summary>
      <div className="sqlnb-schema">{shown && chat ? <Tables chat={chat} onInsert={onInsert} /> : null}</div>
    </details>
  );
}

function Tables(props: { chat: NotebookChat; onInsert: (name: string) => void }): JSX.Element | null {
  const { chat, onInsert } = props;
  // the tables shown open, and the filter, stay as they are while the list is redrawn
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const [filter, setFilter] = useState('');
  const schema = chat.schema;
  if (chat.schemaLoading && !schema) {
    return <div className="sqlnb-muted">Reading the tables…</div>;
  }
  if (chat.schemaError) {
    return <div className="sqlnb-muted sqlnb-schema-error">{chat.schemaError}</div>;
  }
  if (!schema) {
    return null;
  }
  if (!schema.tables.length) {
    return <div className="sqlnb-muted">No tables in this connection.</div>;
  }
  const q = filter.trim().toLowerCase();
  const hit = (t: TableInfo) =>
    !q || t.name.toLowerCase().includes(q) || (t.columns ?? []).some(c => c.name.toLowerCase().includes(q));
  const toggle = (name: string) =>
    setOpened(now => {
      const next = new Set(now);
      if (!next.delete(name)) {
        next.add(name);
      }
      return next;
    });
  return (
    <>
      {schema.tables.length > FILTER_FROM ? (
        <input
          className="jp-mod-styled sqlnb-schema-filter"
          type="search"
          placeholder={`Filter ${schema.tables.length} tables`}
          aria-label="Filter the tables"
          value={filter}
          onChange={e => setFilter(e.currentTarget.value)}
        />
      ) : null}
      <ul className="sqlnb-schema-tables">
        {schema.tables.map(t => (
          <Table
            key={t.name}
            table={t}
            open={opened.has(t.name)}
            hidden={!hit(t)}
            onToggle={() => toggle(t.name)}
            onInsert={onInsert}
          />
        ))}
      </ul>
    </>
  );
}

function Table(props: {
  table: TableInfo;
  open: boolean;
  hidden: boolean;
  onToggle: () => void;
  onInsert: (name: string) => void;
}): JSX.Element {
  const { table: t, open, onInsert } = props;
  const Caret = open ? caretDownIcon : caretRightIcon;
  return (
    <li
      className={`sqlnb-schema-table${open ? ' sqlnb-open' : ''}`}
      data-name={t.name}
      style={props.hidden ? { display: 'none' } : undefined}
    >
      <div
        className="sqlnb-schema-row"
        onClick={e => {
          if ((e.target as HTMLElement).classList.contains('sqlnb-schema-name')) {
            onInsert(t.name);
            return;
          }
          props.onToggle();
        }}
      >
        <Caret.react tag="span" className="sqlnb-caret" />
        <span
          className="sqlnb-schema-name"
          title={`Insert ${t.name} into the question${t.comment ? ` — ${t.comment}` : ''}`}
        >
          {t.name}
        </span>
        <span className="sqlnb-muted sqlnb-schema-kind">{t.kind && t.kind !== 'table' ? t.kind : ''}</span>
      </div>
      <ul className="sqlnb-schema-columns">
        {(t.columns ?? []).map(c => (
          <li key={c.name} className="sqlnb-schema-column" data-name={c.name}>
            <span
              className="sqlnb-schema-name"
              title={`Insert ${c.name} into the question`}
              onClick={() => onInsert(c.name)}
            >
              {c.name}
            </span>
            <span className="sqlnb-muted sqlnb-schema-type">{c.type ?? ''}</span>
            {c.pk ? <span className="sqlnb-key sqlnb-pk">PK</span> : null}
            {c.fk ? <span className="sqlnb-key sqlnb-fk">{`FK → ${c.fk}`}</span> : null}
          </li>
        ))}
      </ul>
    </li>
  );
}
