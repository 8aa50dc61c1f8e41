"""`brainchat mcp-server`: the EEG tools over MCP (stdio, or streamable HTTP with a bearer token).

One EEG study per MCP session; nothing else in brainchat imports this package.
"""
