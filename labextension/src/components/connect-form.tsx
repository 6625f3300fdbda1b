/**
 * The connect form, shown while the kernel is ready but has no connection: a URL or a
 * configured connection's name, a password for a URL without one (never shown, never kept:
 * the field is read once and sent to the kernel), and one Reconnect button per connection
 * a kernel restart took.
 */
import { Button } from '@jupyterlab/ui-components';
import React, { useRef, useState } from 'react';
import type { NotebookChat } from '../chat';
import { useSignal } from './hooks';

export function ConnectBox(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.connectionsChanged);
  const shown = !!chat && chat.isReady && !chat.connections.length;
  const again = shown && chat ? chat.reconnectable : [];
  // a new list of connections to reconnect, or of configured names, starts the form afresh;
  // anything else leaves what the user typed
  const key = [again.map(r => `${r.name} ${r.url}`).join('|'), chat?.known.join('|')].join('/');
  return <div className="sqlnb-connect">{shown && chat ? <ConnectForm key={key} chat={chat} /> : null}</div>;
}

function ConnectForm(props: { chat: NotebookChat }): JSX.Element {
  const { chat } = props;
  const target = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // the name a Reconnect whose URL needs its password gives the connection again
  const named = useRef<{ name: string; url: string } | null>(null);
  const known = chat.known;
  const listId = `sqlnb-known-${chat.path.replace(/[^A-Za-z0-9_-]/g, '_')}`;

  const connect = async (to: string, pass?: string, name?: string) => {
    setBusy(true);
    setError('');
    const failed = await chat.connect(to, {
      ...(pass ? { password: pass } : {}),
      ...(name ? { name } : {})
    });
    setBusy(false);
    if (failed) {
      setError(failed);
    } else if (password.current) {
      password.current.value = '';
    }
  };

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const to = target.current?.value.trim() ?? '';
    if (!to) {
      setError("Give a connection URL (duckdb:///file.duckdb) or a configured connection's name.");
      target.current?.focus();
      return;
    }
    const n = named.current;
    void connect(to, password.current?.value, n && n.url === to ? n.name : undefined);
  };

  return (
    <>
      {chat.reconnectable.length ? (
        <div className="sqlnb-reconnect-row">
          {chat.reconnectable.map(r => (
            <Button
              key={r.name}
              type="button"
              className="sqlnb-button sqlnb-reconnect-one"
              title={`Open ${r.url} again as ${r.name}`}
              disabled={busy}
              onClick={() => {
                if (r.target) {
                  void connect(r.target, undefined, r.target === r.name ? undefined : r.name);
                  return;
                }
                // its URL held a password: type it again (the kernel never sent it back)
                if (target.current) {
                  target.current.value = r.url.replace(/:\*\*\*@/, '@');
                  named.current = { name: r.name, url: target.current.value };
                }
                password.current?.focus();
                setError(`${r.name}'s password is needed again.`);
              }}
            >
              {`Reconnect ${r.name}`}
            </Button>
          ))}
        </div>
      ) : null}
      <form className="sqlnb-connect-form" onSubmit={submit}>
        {known.length ? (
          <datalist id={listId}>
            {known.map(name => (
              <option key={name} value={name} />
            ))}
          </datalist>
        ) : null}
        <input
          ref={target}
          className="jp-mod-styled sqlnb-connect-target"
          type="text"
          placeholder={known.length ? 'A URL, or: ' + known.join(', ') : 'duckdb:///sample.duckdb'}
          aria-label="A connection URL or a configured connection's name"
          autoComplete="off"
          spellCheck={false}
          list={known.length ? listId : undefined}
        />
        <input
          ref={password}
          className="jp-mod-styled sqlnb-connect-password"
          type="password"
          placeholder="Password (if the URL needs one)"
          aria-label="Password for the URL (sent to the kernel only)"
          autoComplete="off"
        />
        <Button type="submit" className="sqlnb-button jp-mod-accept sqlnb-connect-submit" disabled={busy}>
          Connect
        </Button>
      </form>
      <div className="sqlnb-connect-error" role="alert">
        {error}
      </div>
    </>
  );
}
