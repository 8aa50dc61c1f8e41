"""Tools the agent may call: web search, EEG analysis, MCP servers."""
