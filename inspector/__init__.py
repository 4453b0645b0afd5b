"""mcp-inspect: a debugging inspector for MCP servers."""

__version__ = "0.1.0"
