/**
 * The panel's head lines: the notebook it talks about, and its status line (the kernel,
 * sqlnb in it, the active connection, or what went wrong, with Retry / Use here).
 */
import { Button } from '@jupyterlab/ui-components';
import React from 'react';
import type { NotebookChat } from '../chat';
import { useSignal } from './hooks';

export function NotebookTitle(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.titleChanged);
  return (
    <div className="sqlnb-notebook" title={chat?.path}>
      {chat?.title ?? ''}
    </div>
  );
}

export function Banner(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.bannerChanged);
  const banner = chat
    ? chat.banner
    : { text: 'Open a notebook to ask sqlnb about its database.', error: false };
  return (
    <div className="sqlnb-banner-row">
      <div
        className={`sqlnb-banner${banner.error ? ' sqlnb-banner-error' : ''}`}
        role="status"
        aria-live="polite"
      >
        {banner.text}
      </div>
      <div className="sqlnb-banner-action">
        {chat && banner.action ? (
          <Button
            type="button"
            className="sqlnb-button sqlnb-reconnect"
            title="Connect this panel to the kernel again"
            onClick={() => void chat.reconnect()}
          >
            {banner.action === 'use_here' ? 'Use here' : 'Retry'}
          </Button>
        ) : null}
      </div>
    </div>
  );
}
