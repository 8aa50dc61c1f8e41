"""Test MCP servers and helpers to configure them."""
