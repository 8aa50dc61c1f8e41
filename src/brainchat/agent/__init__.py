"""The agent core: a LangGraph state machine that knows nothing of the UI."""
