/** The footer under the question box. */
import React from 'react';
import type { NotebookChat } from '../chat';
import { useSignal } from './hooks';

/** The kernel session's questions so far: answered, attempts, time, tokens, cost. */
export function Footer(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.statsChanged);
  const stats = chat?.stats ?? null;
  return (
    <div
      className="sqlnb-footer sqlnb-muted"
      title={stats ? "This kernel session's questions (%sqlnb stats tells more)" : undefined}
    >
      {stats ?? ''}
    </div>
  );
}
