/**
 * The conversation: its turns, oldest first, kept scrolled to the newest. It draws again
 * when a turn is added or the turns are replaced; each turn follows its own changes.
 */
import React, { useMemo, useRef } from 'react';
import type { NotebookChat } from '../chat';
import { IScroller, ScrollContext } from './context';
import { useSignal } from './hooks';
import { TurnView } from './turn';

const EMPTY =
  'Ask a question about the data of the active connection. sqlnb writes the SQL, runs it, fixes it when it fails, and gives you a %%sql cell.';

export function ConversationView(props: { chat: NotebookChat | null }): JSX.Element {
  const { chat } = props;
  useSignal(chat?.turnAdded);
  useSignal(chat?.turnsReset);
  const ref = useRef<HTMLDivElement>(null);
  const scroller = useMemo<IScroller>(
    () => ({
      down: () => {
        const node = ref.current;
        if (node) {
          node.scrollTop = node.scrollHeight;
        }
      }
    }),
    []
  );
  const turns = chat?.turns ?? [];
  return (
    <div className="sqlnb-turns" ref={ref}>
      <ScrollContext.Provider value={scroller}>
        {chat && !turns.length ? <div className="sqlnb-empty sqlnb-muted">{EMPTY}</div> : null}
        {chat
          ? turns.map((t, i) => (
              <TurnView key={t.id} chat={chat} turnId={t.id} isLast={i === turns.length - 1} />
            ))
          : null}
      </ScrollContext.Provider>
    </div>
  );
}
