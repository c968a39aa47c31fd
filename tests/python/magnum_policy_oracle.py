#!/usr/bin/env python3
"""Policy decisions of the real Magnum 23.0.0 (oslo.policy with Magnum's registered
defaults and, optionally, an operator policy file), for OpenKeel's isolation matrix
(crates/cli/tests/isolation_matrix.rs).

stdin: {"policy_file": PATH or null,
        "checks": [{"rule": R, "context": {RequestContext kwargs}, "target": {...} or null}]}
stdout: a JSON list of booleans, one per check.

The context is Magnum's own ``magnum.common.context.RequestContext`` (``is_admin`` computed
with ``context_is_admin``, as ``ContextHook`` does) and the decision is
``magnum.common.policy.enforce(context, rule, target, do_raise=False)``: exactly what
magnum-api evaluates.
"""

import json
import sys
import warnings

warnings.simplefilter("ignore")


def main():
    req = json.load(sys.stdin)
    import magnum.conf
    from magnum.common import context as mctx
    from magnum.common import policy

    conf = magnum.conf.CONF
    conf([], project="magnum", default_config_files=[])
    # the enforcer Magnum builds on first use, with the operator's file when given
    policy.init(policy_file=req.get("policy_file"))
    out = []
    for check in req["checks"]:
        ctx = mctx.RequestContext(**check["context"])
        out.append(bool(policy.enforce(ctx, check["rule"], check.get("target"),
                                       do_raise=False)))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
