/**
 * The connection sqlnb asks about: the kernel's connections (the active one chosen, as
 * %sqlnb use NAME), a button that reads the tables again, and what the active connection's
 * credentials may write (a few words; the full sentence as the tooltip).
 */
import { refreshIcon, ToolbarButtonComponent } from '@jupyterlab/ui-components';
import React, { useState } from 'react';
import type { NotebookChat } from '../chat';
import { writeAccessIndicator } from '../core/protocol';
import { useSignal } from './hooks';

export function ConnectionBar(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.connectionsChanged);
  useSignal(chat?.busyChanged);
  // the connection picked while the kernel switches to it
  const [pending, setPending] = useState<string | null>(null);
  const ready = !!chat?.isReady;
  const connections = ready && chat ? chat.connections : [];
  const active = chat?.active ?? null;
  const access = writeAccessIndicator(connections.find(c => c.name === active)?.write_access);
  return (
    <>
      <div className="sqlnb-connection-row">
        <label className="sqlnb-label" htmlFor="sqlnb-connections-select">
          Connection
        </label>
        <select
          id="sqlnb-connections-select"
          className="sqlnb-connections"
          aria-label="Connection sqlnb asks about"
          title="The connection sqlnb asks about (the notebook's active one, as %sqlnb use NAME)"
          value={pending ?? active ?? ''}
          disabled={!connections.length || !!chat?.running}
          onChange={e => {
            const name = e.currentTarget.value;
            if (chat && name && name !== chat.active) {
              setPending(name);
              void chat.useConnection(name).finally(() => setPending(null));
            }
          }}
        >
          {connections.length ? null : <option value="">{ready ? 'no connection' : '—'}</option>}
          {connections.map(c => (
            <option key={c.name} value={c.name} title={c.readonly ? `${c.url} (read-only)` : c.url}>
              {`${c.name} · ${c.engine} · ${c.url}`}
            </option>
          ))}
        </select>
        <ToolbarButtonComponent
          className="sqlnb-refresh-schema"
          icon={refreshIcon}
          tooltip="Reload the tables of this connection"
          enabled={!!active && ready}
          onClick={() => void chat?.loadSchema(true)}
        />
      </div>
      <div
        className={`sqlnb-write-access${access ? ` sqlnb-write-access-${access.state}` : ''}`}
        role="note"
        data-state={access?.state}
        title={access?.title}
        aria-label={access?.title}
        style={access ? undefined : { display: 'none' }}
      >
        {access?.text ?? ''}
      </div>
    </>
  );
}
