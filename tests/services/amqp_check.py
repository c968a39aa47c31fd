#!/usr/bin/env python3
"""Log in to an AMQP 0-9-1 broker the way the tests will, with the standard library only.

    amqp_check.py [URL]      (default: $OPENKEEL_TEST_RABBIT_URL)

Opens a connection with the URL's user, password and vhost (PLAIN), opens the vhost,
declares, publishes to and gets from a temporary queue on channel 1, and closes cleanly.
Exits 0 and prints one line on success; exits 1 with the broker's reply otherwise.
"""

import os
import socket
import struct
import sys
import urllib.parse

FRAME_METHOD, FRAME_HEADER, FRAME_BODY, FRAME_END = 1, 2, 3, 0xCE


def shortstr(s):
    b = s.encode()
    return struct.pack("B", len(b)) + b


def longstr(b):
    return struct.pack(">I", len(b)) + b


class Conn:
    def __init__(self, host, port, timeout):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self):
        ftype, chan, size = struct.unpack(">BHI", self._read(7))
        payload = self._read(size)
        if self._read(1)[0] != FRAME_END:
            raise ValueError("bad frame end")
        return ftype, chan, payload

    def method(self, expect):
        while True:
            ftype, chan, payload = self.frame()
            if ftype != FRAME_METHOD:
                continue
            cm = struct.unpack(">HH", payload[:4])
            if cm in ((10, 50), (20, 40)):  # connection.close / channel.close
                code = struct.unpack(">H", payload[4:6])[0]
                n = payload[6]
                text = payload[7 : 7 + n].decode(errors="replace")
                raise ConnectionError(f"broker refused: {code} {text}")
            if cm != expect:
                raise ValueError(f"expected method {expect}, got {cm}")
            return chan, payload[4:]

    def send(self, chan, cls, meth, args=b"", ftype=FRAME_METHOD, raw=None):
        payload = raw if raw is not None else struct.pack(">HH", cls, meth) + args
        self.sock.sendall(struct.pack(">BHI", ftype, chan, len(payload)) + payload + bytes([FRAME_END]))


def check(url, timeout=10.0):
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("amqp",):
        raise ValueError(f"not an amqp:// URL: {url}")
    host, port = u.hostname or "127.0.0.1", u.port or 5672
    user = urllib.parse.unquote(u.username or "guest")
    password = urllib.parse.unquote(u.password or "guest")
    vhost = urllib.parse.unquote(u.path[1:]) if len(u.path) > 1 else "/"

    c = Conn(host, port, timeout)
    c.sock.sendall(b"AMQP\x00\x00\x09\x01")
    _, start = c.method((10, 10))  # connection.start
    vmaj, vmin = start[0], start[1]
    c.send(0, 10, 11, struct.pack(">I", 0) + shortstr("PLAIN")
           + longstr(b"\0" + user.encode() + b"\0" + password.encode()) + shortstr("en_US"))
    try:
        _, tune = c.method((10, 30))  # connection.tune
    except ConnectionError as e:
        raise ConnectionError(f"login as {user!r} failed ({e})") from None
    channel_max, frame_max, _heartbeat = struct.unpack(">HIH", tune[:8])
    c.send(0, 10, 31, struct.pack(">HIH", channel_max, frame_max, 0))
    c.send(0, 10, 40, shortstr(vhost) + shortstr("") + b"\x00")  # connection.open
    c.method((10, 41))
    c.send(1, 20, 10, shortstr(""))  # channel.open
    c.method((20, 11))
    # queue.declare: passive=0 durable=0 exclusive=1 auto_delete=1 nowait=0
    c.send(1, 50, 10, struct.pack(">H", 0) + shortstr("") + bytes([0b01100]) + struct.pack(">I", 0))
    _, declare_ok = c.method((50, 11))
    queue = declare_ok[1 : 1 + declare_ok[0]].decode()
    body = b"openkeel amqp check"
    c.send(1, 60, 40, struct.pack(">H", 0) + shortstr("") + shortstr(queue) + b"\x00")  # basic.publish
    c.send(1, 0, 0, ftype=FRAME_HEADER, raw=struct.pack(">HHQH", 60, 0, len(body), 0))
    c.send(1, 0, 0, ftype=FRAME_BODY, raw=body)
    got = None
    for _ in range(50):
        c.send(1, 60, 70, struct.pack(">H", 0) + shortstr(queue) + b"\x01")  # basic.get no_ack
        ftype, chan, payload = c.frame()
        cm = struct.unpack(">HH", payload[:4])
        if cm == (60, 72):  # get-empty: the publish may not be routed yet
            continue
        if cm != (60, 71):
            raise ValueError(f"unexpected reply to basic.get: {cm}")
        c.frame()  # content header
        _, _, got = c.frame()
        break
    if got != body:
        raise ValueError("the message published to the test queue did not come back")
    c.send(0, 10, 50, struct.pack(">H", 200) + shortstr("bye") + struct.pack(">HH", 0, 0))
    c.method((10, 51))
    c.sock.close()
    return f"AMQP {vmaj}-{vmin} login as {user!r} on vhost {vhost!r} at {host}:{port}: publish/get ok"


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPENKEEL_TEST_RABBIT_URL", "")
    if not url:
        print("amqp_check: no URL (argument or OPENKEEL_TEST_RABBIT_URL)", file=sys.stderr)
        return 2
    try:
        print(check(url))
    except Exception as e:  # noqa: BLE001 - report anything as a failed check
        print(f"amqp_check: {url}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
