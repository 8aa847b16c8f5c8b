"""One Venus per user and profile: a second start brings the running window to the front and exits.

The first instance listens on a local socket (a Unix socket, or a named pipe on Windows) named after the user and
the settings folder, so profiles started with another VENUS_CONFIG_DIR stay independent. A later start connects,
asks the first to show itself, waits for its "ok" and exits. A socket left behind by a crashed instance answers
nobody; it is removed and this start becomes the first.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

SHOW = b"show\n"
OK = b"ok\n"


def instance_key(config_dir: Path) -> str:
    """The socket's name for this user and settings folder (short: Unix socket paths are limited to ~100 bytes)."""
    who = f"{getpass.getuser()}:{Path(config_dir).resolve()}"
    return "venus-" + hashlib.sha1(who.encode()).hexdigest()[:16]


class SingleInstance(QObject):
    """The running instance's end (`listen`, then `activated` on each later start) and the later start's end
    (`ask_running_to_show`)."""

    activated = Signal()  # another start asked this instance to show its window

    def __init__(self, key: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.key = key
        self._server: QLocalServer | None = None

    def ask_running_to_show(self, timeout_ms: int = 1500) -> bool:
        """True when an instance is running and said it will show itself; False when none answers."""
        socket = QLocalSocket()
        socket.connectToServer(self.key)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(SHOW)
        socket.waitForBytesWritten(timeout_ms)
        answered = socket.waitForReadyRead(timeout_ms) and bytes(socket.readLine().data()) == OK
        socket.disconnectFromServer()
        return answered

    def listen(self) -> bool:
        """Become the running instance; False (logged) when the socket cannot be created."""
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)  # nobody else may knock
        if not server.listen(self.key):
            if server.serverError() == QAbstractSocket.SocketError.AddressInUseError and not self.ask_running_to_show(300):
                QLocalServer.removeServer(self.key)  # left by an instance that crashed: nobody answers on it
                server.listen(self.key)
            if not server.isListening():
                log.warning("cannot listen for a second start (%s); it will open a second window",
                            server.errorString())
                return False
        server.newConnection.connect(self._on_connection)
        self._server = server
        return True

    def close(self) -> None:
        """Stop listening (the socket file goes with it)."""
        if self._server is not None:
            self._server.close()
            self._server = None

    def _on_connection(self) -> None:
        while self._server is not None and self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda socket=socket: self._on_request(socket))
            socket.disconnected.connect(socket.deleteLater)

    def _on_request(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        if bytes(socket.readLine().data()) == SHOW:
            log.info("a second start asked for the window")
            socket.write(OK)
            socket.flush()
            self.activated.emit()
        socket.disconnectFromServer()
