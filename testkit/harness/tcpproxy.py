"""A loopback TCP forwarder whose connections a test can cut, to kill a watch stream for real."""

from __future__ import annotations

import socket
import threading


class TCPProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def refusing(self) -> bool:
        """Whether a new connection is accepted and closed at once (a proxy that refuses service)."""
        return False

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing():
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._conns += [client, upstream]
                self.accepted += 1
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> int:
        """Reset every open connection; returns how many were cut."""
        with self._lock:
            conns, self._conns = self._conns, []
        for sock in conns:
            # shutdown() wakes the pipe thread blocked in recv(); close() alone would not.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        return len(conns) // 2

    def close(self) -> None:
        self._closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        except OSError:
            pass
        self.listener.close()
        self.cut()


class PausableProxy(TCPProxy):
    """A TCPProxy that can also refuse service for a while (accept, then close at once), so a
    watch stays down while the test changes things behind its back."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.paused = threading.Event()
        super().__init__(target_host, target_port)

    def refusing(self) -> bool:
        return self.paused.is_set()

    def pause(self) -> int:
        """Refuse new connections and cut the open ones; returns how many were cut."""
        self.paused.set()
        return self.cut()

    def resume(self) -> None:
        self.paused.clear()
