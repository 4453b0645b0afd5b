"""A server process over stdio: own process group, reader threads, a lifeline, the shutdown ladder.

The transport knows lines and processes, not JSON-RPC: it hands every stdout line and stderr line to callbacks
and reports the exit. Writes never wait on the server (`stdin_writer`), so a server that stops reading blocks
neither a caller nor the shutdown. Order of shutdown (MCP SDK client/stdio): close stdin, wait, SIGTERM the group,
wait, SIGKILL the group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from inspector.transport import ExitInfo, SpawnError
from inspector.transport.lines import LineSplitter
from inspector.transport.stdin_writer import StdinWriter

STDERR_TAIL_LINES = 20
MAX_LINE_BYTES = 64 * 1024 * 1024
READ_BYTES = 1 << 18
"""The most one read of the server's stdout takes: more than a pipe holds (64 KiB on Linux), so one read empties it."""

# Runs in the server's process group and holds a pipe from the inspector. When the inspector dies, even by
# kill -9, the pipe closes and the lifeline takes the whole group down, so no server outlives its inspector.
# A POSIX shell, not a second Python: it starts in about a millisecond instead of tens (and takes no CPU from the
# server's and our own start-up); `read` is a builtin that blocks until EOF (we never write), `kill 0` signals the
# shell's own group. Ignored signals stay ignored across exec, so `sleep` outlives the SIGTERM it sends too.
_LIFELINE_SH = "trap '' TERM INT; while read -r _; do :; done; kill -TERM 0; sleep 1; kill -KILL 0"
_LIFELINE_PY = (  # where there is no /bin/sh
    "import os,signal,sys,time\n"
    "signal.signal(signal.SIGTERM,signal.SIG_IGN)\n"
    "signal.signal(signal.SIGINT,signal.SIG_IGN)\n"
    "pg=os.getpgrp()\n"
    "while sys.stdin.buffer.read(65536): pass\n"
    "try:\n"
    "    os.killpg(pg,signal.SIGTERM); time.sleep(1.0); os.killpg(pg,signal.SIGKILL)\n"
    "except OSError: pass\n"
)


def _lifeline_argv() -> list[str]:
    return ["/bin/sh", "-c", _LIFELINE_SH] if os.path.exists("/bin/sh") else [sys.executable, "-c", _LIFELINE_PY]


def _own_group(pgid: int) -> dict:
    """Popen arguments that put the child in process group pgid (0: a new group of its own).

    A new group, not a new session: a process may only join a group of its own session, and the lifeline
    must join the server's group. Ctrl-C in the terminal still reaches only the inspector (the foreground group).
    """
    if sys.version_info >= (3, 11):
        return {"process_group": pgid}
    return {"preexec_fn": lambda: os.setpgid(0, pgid)}  # Python 3.10


def resolve_command(command: list[str], cwd: str | None, env: dict[str, str]) -> str:
    """The executable's path, or a SpawnError that says in one line why it cannot run."""
    if not command:
        raise SpawnError("no server command given")
    program = command[0]
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
        if not os.path.exists(path):
            raise SpawnError(f"command not found: {program}")
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise SpawnError(f"command is not executable: {program}")
        return path
    found = _which(program, env.get("PATH", os.defpath))
    if not found:
        raise SpawnError(f"command not found: {program}")
    return found


def _which(program: str, path: str) -> str | None:
    """The first executable file named `program` in the folders of `path`: shutil.which's search on POSIX, where
    every spawn needs it, without importing shutil (which imports bz2, lzma and zlib: milliseconds of each start)."""
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, program)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def spawn(command: list[str], cwd: str | None, env: dict[str, str]) -> subprocess.Popen:
    """Start the server command in a process group of its own, its three streams piped; raises SpawnError."""
    resolve_command(command, cwd, env)
    try:
        return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env, close_fds=True, **_own_group(0))
    except OSError as exc:
        raise SpawnError(f"cannot start {command[0]}: {exc.strerror or exc}") from None


def spawn_early(command: list[str], cwd: str | None, env: dict[str, str]) -> subprocess.Popen | SpawnError:
    """The server started before the rest of its StdioProcess's caller is ready, or why it could not start (to
    be raised when the StdioProcess starts, so the failure is recorded where any spawn failure is).

    A Python server takes longer to start than the inspector's client takes to import: spawned first, the two
    start at once (`call`'s whole run is its start-up). Until a StdioProcess takes it, no reader drains its pipes
    (they buffer) and no lifeline watches it; whoever spawned it early stops it with `discard` if none will."""
    try:
        return spawn(command, cwd, env)
    except SpawnError as exc:
        return exc


def discard(spawned: subprocess.Popen | SpawnError | None) -> None:
    """Stop a server spawn_early started that no StdioProcess took (the command failed before it could)."""
    if not isinstance(spawned, subprocess.Popen):
        return
    for stream in (spawned.stdin, spawned.stdout, spawned.stderr):
        stream.close()
    try:
        os.killpg(spawned.pid, signal.SIGKILL)  # its own group; it has done nothing yet that needs a clean end
    except OSError:
        pass
    spawned.wait()


class StdioProcess:
    """One run of the server command."""

    def __init__(self, command: list[str], *, cwd: str | None, env: dict[str, str],
                 on_stdout: Callable[[bytes], None], on_stderr: Callable[[str], None],
                 on_exit: Callable[[ExitInfo], None], on_spawn: Callable[[int], None] | None = None,
                 on_stdout_batch: Callable[[list[bytes]], None] | None = None,
                 spawned: subprocess.Popen | SpawnError | None = None) -> None:
        """`on_stdout` gets each stdout line; `on_stdout_batch`, when given, gets instead the lines of each read
        (in order, at least one) so they can be recorded together. `spawned`: what spawn_early gave for this
        command, which the first start() takes instead of spawning (its SpawnError raised there)."""
        self.command = command
        self._cwd, self._env = cwd, env
        self._on_stdout, self._on_stderr, self._on_exit = on_stdout, on_stderr, on_exit
        self._on_stdout_batch = on_stdout_batch
        self._on_spawn = on_spawn
        self._spawned = spawned
        self._proc: subprocess.Popen | None = None
        self._lifeline: subprocess.Popen | None = None
        self._stdin: StdinWriter | None = None
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._readers: list[threading.Thread] = []
        self.exit_info: ExitInfo | None = None
        self.exited = threading.Event()
        self.unread_at_exit: int | None = None
        """Bytes we wrote that the server had not read when it exited (None: unknown): a server that died with our
        question unread did not die of it."""
        self._stopping = False

    @property
    def pid(self) -> int | None:
        """The server's pid (also its process group id)."""
        return self._proc.pid if self._proc else None

    def start(self) -> int:
        """Spawn the server in a new process group (or take the one spawned for it); returns its pid."""
        spawned, self._spawned = self._spawned, None
        if isinstance(spawned, SpawnError):
            raise spawned
        self._proc = spawned or spawn(self.command, self._cwd, self._env)
        # Our own copy of the pipe's fd, so the Popen's file object is closed and never written or flushed.
        stdin_fd = os.dup(self._proc.stdin.fileno())
        self._proc.stdin.close()
        self._stdin = StdinWriter(stdin_fd, name=f"server-stdin-{self._proc.pid}")
        if self._on_spawn:
            self._on_spawn(self._proc.pid)  # before the readers start: the spawn precedes anything the server says
        for target, stream, name in ((self._read_stdout, self._proc.stdout, "stdout"),
                                     (self._read_stderr, self._proc.stderr, "stderr")):
            thread = threading.Thread(target=target, args=(stream,), name=f"server-{name}-{self._proc.pid}",
                                      daemon=True)
            thread.start()
            self._readers.append(thread)
        threading.Thread(target=self._wait_exit, name=f"server-exit-{self._proc.pid}", daemon=True).start()
        return self._proc.pid

    def _start_lifeline(self) -> None:
        try:
            self._lifeline = subprocess.Popen(
                _lifeline_argv(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, close_fds=True, **_own_group(self._proc.pid))
        except (OSError, subprocess.SubprocessError):
            # The group may already be gone (the server died at once):
            # the shutdown ladder still cleans up; only the kill -9 guarantee is lost.
            self._lifeline = None

    def unread_input(self) -> int | None:
        """How many bytes we wrote that the server has not read from its stdin yet; None where unknown.

        The era probe's sign of life for a server that says nothing: once it has read our question, its silence
        is an answer (what still waits in our queue, plus FIONREAD: the bytes buffered in the pipe).
        """
        return self._stdin.unread() if self._stdin is not None else None

    def send(self, data: bytes) -> None:
        """Hand whole lines to the server's stdin; never waits for the server to read them.

        Raises BrokenPipeError when its stdin is closed, BlockingIOError when it has stopped reading and too much
        waits already (`stdin_writer.MAX_QUEUED_BYTES`).
        """
        if self._stdin is None:
            raise BrokenPipeError("server stdin is closed")
        self._stdin.put(data)

    def _read_stdout(self, stream) -> None:
        # What the pipe holds at each read, cut into whole lines: a flood reaches the client as batches (one
        # recording write each), a quiet server's line as soon as it is written.
        splitter = LineSplitter(MAX_LINE_BYTES)
        while True:
            chunk = stream.read1(READ_BYTES)
            lines = splitter.feed(chunk) if chunk else splitter.finish()
            if lines:
                if self._on_stdout_batch is not None:
                    self._on_stdout_batch(lines)
                else:
                    for line in lines:
                        self._on_stdout(line)
            if not chunk:
                return

    def _read_stderr(self, stream) -> None:
        while True:
            line = stream.readline(MAX_LINE_BYTES)
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr_tail.append(text)
            self._on_stderr(text)

    def _wait_exit(self) -> None:
        assert self._proc is not None
        # The lifeline is spawned here, off the caller's thread: the caller goes on to write its first request
        # while the shell starts (a spawn waits for the child's exec, milliseconds on a busy machine), and this
        # thread, the only one that closes it before the exit is reported, cannot close it before it exists. The
        # server is not reaped yet, so its group is there to join even if it has died already.
        self._start_lifeline()
        returncode = self._proc.wait()
        # Let the readers hand over what the server wrote before dying, so its last words precede the exit row.
        # A grandchild can keep the pipes open, so do not wait for EOF for long.
        for reader in self._readers:
            reader.join(timeout=0.5)
        if returncode < 0:
            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = f"signal {-returncode}"
            info = ExitInfo(code=None, signal=name, stderr_tail=list(self._stderr_tail))
        else:
            info = ExitInfo(code=returncode, signal=None, stderr_tail=list(self._stderr_tail))
        self.exit_info = info
        # The server is gone, but what it started may not be: nothing of its group outlives it. The lifeline (which
        # ignores SIGTERM) is reaped once the SIGTERM is out, so the group then exists only through others: one
        # signal-0 answers what a scan of /proc did (tens of ms on a busy machine, paid by every `call`).
        self._kill_group(signal.SIGTERM)
        self._close_lifeline()
        if self._group_alive():
            time.sleep(0.2)
            self._kill_group(signal.SIGKILL)
        if self._stdin is not None:
            self.unread_at_exit = self._stdin.unread()
            self._stdin.close()
        # Report before waking stop(): a restart must see the old server's exit recorded before the new spawn.
        self._on_exit(info)
        self.exited.set()

    def stop(self, stdin_grace: float = 2.0, term_grace: float = 1.0) -> ExitInfo | None:
        """The shutdown ladder: close stdin, wait, SIGTERM the group, wait, SIGKILL the group."""
        if self._proc is None:
            return None
        self._stopping = True
        if self._stdin is not None:
            self._stdin.close()  # at once, even while a write waits for a server that stopped reading
        if not self.exited.wait(stdin_grace):
            self._kill_group(signal.SIGTERM)
            if not self.exited.wait(term_grace):
                self._kill_group(signal.SIGKILL)
                self.exited.wait(5.0)
        self._kill_group(signal.SIGKILL)  # stragglers that ignored everything
        self._close_lifeline()
        return self.exit_info

    def _kill_group(self, sig: int) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _group_alive(self) -> bool:
        """Whether anyone is left in the server's group; asked once the lifeline (a member) is reaped."""
        if self._proc is None:
            return False
        try:
            os.killpg(self._proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _close_lifeline(self) -> None:
        lifeline, self._lifeline = self._lifeline, None
        if lifeline is None:
            return
        try:
            lifeline.kill()
        except OSError:
            pass
        try:
            if lifeline.stdin:
                lifeline.stdin.close()
        except OSError:
            pass
        # A blocking wait, not wait(timeout): Popen polls a timed wait with sleeps (0.5 ms, then doubling), and
        # SIGKILL ends a shell blocked in read() at once.
        lifeline.wait()
