"""The agent: turns a question into a runnable SQL cell with a language model."""
