"""magnum-api's WSGI entry point (magnum.wsgi.api:application) for a WSGI server.

magnum.wsgi.api parses sys.argv with oslo.config at import time, so give it only the
configuration files (env MAGNUM_BENCH_CONF, colon-separated, later files win) instead of the
WSGI server's own arguments. Like a uWSGI/gunicorn deployment of Magnum (and unlike the
`magnum-api` console script), this does not set MagnumObject.indirection_api: objects are
read from the database directly, not through RPC calls to magnum-conductor (checked below).
"""
import os
import sys

_args = [sys.argv[0]]
for _f in os.environ["MAGNUM_BENCH_CONF"].split(":"):
    _args += ["--config-file", _f]
sys.argv = _args

from magnum.wsgi.api import application  # noqa: E402,F401
from magnum.objects import base as _objects_base  # noqa: E402

if _objects_base.MagnumObject.indirection_api is not None:
    raise RuntimeError("MagnumObject.indirection_api is set: objects would be read by RPC "
                       "to magnum-conductor, not from the database")
