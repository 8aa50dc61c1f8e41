"""The EEG study as LangChain tools for the agent: schemas, plumbing, the tool list, the views."""
