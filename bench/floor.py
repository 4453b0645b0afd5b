"""The floor every benchmark compares against: a bare Python client with no inspector.

It spawns the server, does the handshake, sends one request, parses every line that comes back until that
request's answer, prints the result and exits. Run as a script so its whole process is timed like ours:

    python bench/floor.py list -- python tests/fixtures/raw_server.py
    python bench/floor.py flood 100000 -- python tests/fixtures/flood_server.py
"""

import json
import subprocess
import sys


def main(argv):
    sep = argv.index("--")
    what, rest, command = argv[0], argv[1:sep], argv[sep + 1:]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer(mid):
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("id") == mid:
                return message
        raise SystemExit("the server closed its stdout before answering")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if what == "list":
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    else:
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "flood", "arguments": {"n": int(rest[0])}}})
    print(json.dumps(answer(2)["result"])[:200])
    proc.stdin.close()
    proc.wait()


if __name__ == "__main__":
    main(sys.argv[1:])
