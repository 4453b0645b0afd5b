"""Row 29 (SSRF), a note of the security findings (12): the own-port check compared the host literally, so
127.1, 2130706433, 0x7f000001, 017700000001 or ::ffff:127.0.0.1 reached mcp-inspect's own listener (the Host check
stopped it there). Every form the resolver takes for a loopback address is now the loopback address."""

from __future__ import annotations

import pytest

from inspector.transport.http import ConnectError, HttpConnection

FORMS = ("127.1", "2130706433", "0x7f000001", "017700000001", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "127.0.0.2")


@pytest.mark.parametrize("host", FORMS)
def test_every_spelling_of_a_loopback_address_is_refused_at_the_own_port(host):
    connection = HttpConnection(f"http://{host}:8765/mcp", on_message=print, on_event=print, on_send_failed=print,
                                on_exit=print, refuse_ports=[8765])
    with pytest.raises(ConnectError, match="mcp-inspect's own port"):
        connection.start()
