"""Magnum 23.0.0's own routing answers, for crates/cli/tests/routing_vs_magnum.rs.

Reads a JSON list of requests ({"method", "path", "headers"}) on stdin and sends each through
magnum-api's real WSGI application (`magnum.api.app.setup_app`: pecan, the controllers, the
hooks and ParsableErrorMiddleware, as magnum-api builds it), in process, with no database and
no broker. Prints a JSON list of answers ({"status", "allow", "body"}), one per request.

Requests that pass routing reach a handler, which needs the database: their answers are
whatever that failure makes (usually a 500), and the caller ignores them; routing answers
(pecan's 404 / 405, the microversion 406, WSME's argument errors) never touch the database.
"""
import json
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from oslo_log import log  # noqa: E402
import magnum.conf  # noqa: E402

CONF = magnum.conf.CONF
log.register_options(CONF)
CONF([], project="magnum")

from magnum.api import app as api_app  # noqa: E402
import webob  # noqa: E402

app = api_app.setup_app()

# A warmed process, as a production magnum-api is: pecan inspects each controller class's
# members once (`routing._detect_custom_path_segments`) and only records the class when the
# inspection completes. Below a controller's microversion that inspection stops at the first
# versioned member in alphabetical order, so a process that never served the controller at
# a later version names that member in its 406 ("... the requested API delete is not
# supported ..."); once it has, the 406 names the member pecan looks up while routing
# ("get_one"). One request per controller at the latest version before the sweep.
WARM = [
    ("GET", "/v1/clusters"), ("GET", "/v1/clustertemplates"), ("GET", "/v1/quotas"),
    ("GET", "/v1/certificates/c1"), ("GET", "/v1/mservices"), ("GET", "/v1/stats"),
    ("GET", "/v1/federations"), ("PATCH", "/v1/credentials/c1"),
    ("GET", "/v1/clusters/c1/nodegroups"), ("POST", "/v1/clusters/c1/actions/resize"),
]
for method, path in WARM:
    try:
        webob.Request.blank(path, method=method, headers={
            "OpenStack-API-Version": "container-infra latest"}).get_response(app)
    except Exception:  # the handler needed the database: the traversal is done
        pass

answers = []
for req in json.load(sys.stdin):
    r = webob.Request.blank(req["path"], method=req["method"], headers=req.get("headers", {}))
    try:
        resp = r.get_response(app)
        try:
            body = json.loads(resp.body)
        except ValueError:
            body = resp.body.decode("utf-8", "replace")
        answers.append({"status": resp.status_int, "allow": resp.headers.get("Allow"), "body": body})
    except Exception as e:  # a handler that needed the database or the broker
        answers.append({"status": None, "allow": None, "body": "%s: %s" % (type(e).__name__, e)})
json.dump(answers, sys.stdout)
