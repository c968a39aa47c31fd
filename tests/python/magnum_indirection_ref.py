"""Run indirection requests through the REAL Magnum 23.0.0 conductor handler.

Reads a JSON list of requests on stdin, each
  {"method": "object_action" | "object_class_action_versions" | "object_backport_versions",
   "context": {RequestContext.to_dict() keys}, "args": {the RPC's keyword arguments}}
and runs them in order through magnum.conductor.handlers.indirection_api.Handler against the
database given as argv[1] (an SQLAlchemy URL, already migrated), deserializing and serializing
as magnum-conductor's RPC server does (MagnumObjectSerializer). Prints a JSON list with, per
request, {"result": ...} or {"failure": {"class", "module", "message"}} (the exception the
ExpectedException carries, as oslo.messaging would send it back).

Used by crates/conductor/tests/indirection_vs_magnum.rs to compare OpenKeel's conductor with
Magnum's on the same requests.
"""
import json
import sys
import warnings

warnings.simplefilter("ignore")


def main():
    url = sys.argv[1]
    reqs = json.load(sys.stdin)
    import magnum.conf
    conf = magnum.conf.CONF
    conf([], project="magnum", default_config_files=[])
    conf.set_override("connection", url, group="database")
    import oslo_messaging as messaging
    from oslo_serialization import jsonutils
    from magnum import objects
    from magnum.common import context
    from magnum.conductor.handlers import indirection_api

    handler = indirection_api.Handler()
    ser = objects.base.MagnumObjectSerializer()
    out = []
    for r in reqs:
        ctx = context.RequestContext.from_dict(r["context"])
        try:
            args = {k: ser.deserialize_entity(ctx, v) for k, v in r["args"].items()}
            res = getattr(handler, r["method"])(ctx, **args)
            out.append({"result": jsonutils.loads(
                jsonutils.dumps(ser.serialize_entity(ctx, res)))})
        except messaging.ExpectedException as e:
            exc = e.exc_info[1]
            out.append({"failure": {"class": type(exc).__name__,
                                    "module": type(exc).__module__,
                                    "message": str(exc)}})
        except Exception as exc:  # raised outside the object method (deserialization)
            out.append({"failure": {"class": type(exc).__name__,
                                    "module": type(exc).__module__,
                                    "message": str(exc)}})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
