"""The config files of other MCP clients (Claude Desktop, Claude Code, Cursor, VS Code): read their servers, and
write ours as an entry of theirs."""

from inspector.client_configs.env_file import parse_env_file
from inspector.client_configs.read import TRANSPORTS, ConfigError, ServerEntry, load_config_file, parse_config, pick
from inspector.client_configs.snippet import FLAVOURS, server_entry_snippet

__all__ = ["FLAVOURS", "TRANSPORTS", "ConfigError", "ServerEntry", "load_config_file", "parse_config",
           "parse_env_file", "pick", "server_entry_snippet"]
