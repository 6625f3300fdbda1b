/**
 * The question box: Enter asks (Shift+Enter makes a new line), New conversation, Stop
 * while a question is answered, and the session's questions so far below (the footer).
 * A question that could not be asked goes back into the box.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Button } from '@jupyterlab/ui-components';
import React, { forwardRef, useEffect, useImperativeHandle, useRef, useState } from 'react';
import type { NotebookChat } from '../chat';
import { Footer } from './footer';
import { useSignal } from './hooks';
import { showError } from './turn';

/** What the rest of the panel does with the question box. */
export interface IQuestionBox {
  focus(): void;
  /** Put `text` (a table's or a column's name) into the question at the cursor. */
  insert(text: string): void;
}

interface IQuestionBoxProps {
  chat: NotebookChat | null;
  /** a question is on its way */
  onAsk: () => void;
}

function QuestionBoxView(props: IQuestionBoxProps, ref: React.ForwardedRef<IQuestionBox>): JSX.Element {
  const { chat, onAsk } = props;
  useSignal(chat?.busyChanged);
  useSignal(chat?.turnAdded);
  useSignal(chat?.turnsReset);
  const input = useRef<HTMLTextAreaElement>(null);
  const [value, setValue] = useState(chat?.draft ?? '');
  const [sending, setSending] = useState(false);
  const sendingNow = useRef(false);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    []
  );
  const edit = (text: string) => {
    setValue(text);
    chat?.setDraft(text);
  };
  useImperativeHandle(
    ref,
    () => ({
      focus: () => input.current?.focus(),
      insert: (text: string) => {
        const box = input.current;
        if (!box) {
          return;
        }
        const start = box.selectionStart ?? box.value.length;
        const end = box.selectionEnd ?? start;
        const before = box.value.slice(0, start);
        const pad = before && !/\s$/.test(before) ? ' ' : '';
        box.setRangeText(pad + text, start, end, 'end');
        edit(box.value);
        box.focus();
      }
    }),
    [chat]
  );

  const send = async () => {
    const text = value.trim();
    if (!chat || !text || sendingNow.current) {
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
    sendingNow.current = true;
    setSending(true);
    edit('');
    onAsk();
    try {
      await chat.ask(text);
    } catch (e) {
      // never lose the question: put it back
      if (mounted.current) {
        const now = input.current?.value ?? '';
        edit(now.trim() ? `${text}\n${now}` : text);
      } else {
        chat.setDraft(text);
      }
      showError(chat, e);
    } finally {
      sendingNow.current = false;
      if (mounted.current) {
        setSending(false);
      }
    }
  };

  const running = chat?.running ?? null;
  const busy = !!running || sending;
  return (
    <div className="sqlnb-compose">
      <textarea
        ref={input}
        className="jp-mod-styled sqlnb-question-input"
        rows={3}
        aria-label="Question for sqlnb"
        placeholder="Ask a question about your data (Enter sends, Shift+Enter for a new line)"
        disabled={!chat}
        value={value}
        onChange={e => edit(e.currentTarget.value)}
        onKeyDown={e => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            e.stopPropagation();
            void send();
          }
        }}
      />
      <div className="sqlnb-compose-buttons">
        <Button
          type="button"
          className="sqlnb-button sqlnb-new"
          title="Forget this notebook's conversation and start a new one"
          disabled={!chat || busy || !chat.turns.length}
          onClick={() => {
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
          }}
        >
          New conversation
        </Button>
        <span className="sqlnb-spacer" />
        <Button
          type="button"
          className="sqlnb-button sqlnb-stop"
          title="Stop the answer being written"
          style={running ? undefined : { display: 'none' }}
          disabled={!running?.run}
          onClick={() => void chat?.stop()}
        >
          Stop
        </Button>
        <Button
          type="button"
          className="sqlnb-button jp-mod-accept sqlnb-send"
          title="Ask (Enter)"
          disabled={!chat || busy || !value.trim()}
          onClick={() => void send()}
        >
          Ask
        </Button>
      </div>
      <Footer chat={chat} />
    </div>
  );
}

export const QuestionBox = forwardRef<IQuestionBox, IQuestionBoxProps>(QuestionBoxView);
