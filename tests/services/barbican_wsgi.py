"""Serve the real Barbican API (tests/services/barbican.sh): its paste app, loaded from the
paste file given, on a threaded wsgiref server bound to 127.0.0.1 only.

    python barbican_wsgi.py PASTE_INI PORT

Barbican reads its configuration (barbican.conf) from $HOME/.barbican/ (oslo.config's
search path); barbican.sh sets HOME to the service's private directory.
"""
import socketserver
import sys
import threading
import uuid
from wsgiref import simple_server

from paste import deploy


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(simple_server.WSGIRequestHandler):
    def log_message(self, fmt, *args):  # one line per request on stderr
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))


def _with_request_id(app):
    """Barbican 23.0.0's UnauthenticatedContextMiddleware reads ``req.request_id``, an
    attribute nothing in its paste pipeline sets (AttributeError, HTTP 500 on every /v1
    call): give each request one, as oslo.context would."""

    def wrapped(environ, start_response):
        attrs = environ.setdefault("webob.adhoc_attrs", {})
        attrs.setdefault("request_id", "req-" + str(uuid.uuid4()))
        return app(environ, start_response)

    return wrapped


def _serialized(app):
    """One request at a time: Barbican on SQLite answers concurrent writes with
    "database is locked" (HTTP 500); the tests' clients run in parallel."""
    lock = threading.Lock()

    def wrapped(environ, start_response):
        with lock:
            result = app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()

    return wrapped


def main():
    paste_ini, port = sys.argv[1], int(sys.argv[2])
    app = _serialized(_with_request_id(deploy.loadapp("config:%s" % paste_ini)))
    httpd = simple_server.make_server("127.0.0.1", port, app, _Server, _Handler)
    sys.stderr.write("barbican-api listening on 127.0.0.1:%d\n" % port)
    sys.stderr.flush()
    httpd.serve_forever()


if __name__ == "__main__":
    main()
