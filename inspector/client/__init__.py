"""The one JSON-RPC client: the page's Session and the headless commands (`call`, `check`, `replay`) speak to a
server through it.

rpc: ids, pending requests, record-then-write, timeouts; handshake: the era probe and the connection in an era;
offer: what the server offers; connect: a target (command or URL) becomes a transport.

Import the modules themselves (`from inspector.client.rpc import Client`): this package imports nothing, so the
commands can read their options (client.deadlines) before the client loads.
"""
