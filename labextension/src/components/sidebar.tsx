/**
 * The whole sidebar for the current notebook: its head (the notebook, the status line, the
 * shared model's state, the connect form, the connection and its tables), the conversation,
 * and the question box. It draws again when the current notebook changes; each part follows
 * its own signals of that notebook's NotebookChat.
 */
import React, { useEffect, useState } from 'react';
import type { NotebookChat } from '../chat';
import type { SqlnbModel } from '../model';
import type { ModelServerStatus } from '../modelserver';
import { Banner, NotebookTitle } from './banner';
import { ConnectBox } from './connect-form';
import { ConnectionBar } from './connection-bar';
import { ConversationView } from './conversation';
import { useSignal } from './hooks';
import { ModelStatus } from './model-status';
import { IQuestionBox, QuestionBox } from './question-box';
import { TableBrowser } from './table-browser';

export interface ISidebarProps {
  model: SqlnbModel;
  modelServer: ModelServerStatus | null;
  /** whether the panel is shown (a shown panel connects the notebook's kernel) */
  isVisible: () => boolean;
  /** the question box, for the panel's own use (the open command focuses it) */
  questionBox: React.RefObject<IQuestionBox>;
}

const chatKeys = new WeakMap<NotebookChat, number>();
let nextKey = 0;

/** A key per notebook: another notebook's view starts afresh (its draft comes back). */
function keyOf(chat: NotebookChat | null): string {
  if (!chat) {
    return 'none';
  }
  let key = chatKeys.get(chat);
  if (key === undefined) {
    key = ++nextKey;
    chatKeys.set(chat, key);
  }
  return `chat-${key}`;
}

export function Sidebar(props: ISidebarProps): JSX.Element {
  const { model, isVisible } = props;
  useSignal(model.currentChanged);
  const chat = model.current;
  useEffect(() => {
    if (chat && isVisible()) {
      chat.activate();
    }
  }, [chat, isVisible]);
  return <ChatView key={keyOf(chat)} chat={chat} {...props} />;
}

function ChatView(props: ISidebarProps & { chat: NotebookChat | null }): JSX.Element {
  const { chat, modelServer, questionBox } = props;
  // the tables fold away once a conversation has started: its answers come first
  const [tablesOpen, setTablesOpen] = useState(() => !chat?.turns.length);
  return (
    <>
      <div className="sqlnb-header">
        <NotebookTitle chat={chat} />
        <Banner chat={chat} />
        <ModelStatus status={modelServer} />
        <ConnectBox chat={chat} />
        <ConnectionBar chat={chat} />
        <TableBrowser
          chat={chat}
          open={tablesOpen}
          onToggle={setTablesOpen}
          onInsert={name => questionBox.current?.insert(name)}
        />
      </div>
      <ConversationView chat={chat} />
      <QuestionBox
        ref={questionBox}
        chat={chat}
        // the answer comes first (the tables are one click away)
        onAsk={() => setTablesOpen(false)}
      />
    </>
  );
}
