"""Drive Magnum 23.0.0's own barbican cert manager
(magnum.common.cert_manager.barbican_cert_manager) for OpenKeel's compatibility test
(crates/conductor/tests/barbican.rs).

    python magnum_barbican_cert.py MAGNUM_CONF PROJECT_ID store CERT_FILE KEY_FILE PASS NAME
    python magnum_barbican_cert.py MAGNUM_CONF PROJECT_ID get REF
    python magnum_barbican_cert.py MAGNUM_CONF PROJECT_ID delete REF

Magnum's real code runs unchanged (service credentials from [keystone_auth], the
key-manager endpoint from the catalogue with [barbican_client], openstacksdk's
key_manager proxy). The one addition: the session sends X-Project-Id, because the test
Barbican runs its unauthenticated-context pipeline instead of keystonemiddleware (which
would derive that header from the token). Output: one JSON document on stdout.
"""
import json
import sys

import magnum.conf
from magnum.common.cert_manager import barbican_cert_manager as bcm


def main():
    conf_file, project, op = sys.argv[1], sys.argv[2], sys.argv[3]
    magnum.conf.CONF(["--config-file", conf_file], project="magnum")
    osc = bcm.get_admin_clients()
    osc.keystone().session.additional_headers["X-Project-Id"] = project
    mgr = bcm.CertManager
    if op == "store":
        cert_file, key_file, passphrase, name = sys.argv[4:8]
        with open(cert_file) as f:
            cert = f.read()
        with open(key_file) as f:
            key = f.read()
        ref = mgr.store_cert(certificate=cert, private_key=key,
                             private_key_passphrase=passphrase or None,
                             name=name)
        print(json.dumps({"ref": ref}))
    elif op == "get":
        c = mgr.get_cert(sys.argv[4])

        def text(v):
            return v.decode() if isinstance(v, bytes) else v
        print(json.dumps({
            "certificate": text(c.get_certificate()),
            "private_key": text(c.get_private_key()),
            "private_key_passphrase": text(c.get_private_key_passphrase()),
            "intermediates": text(c.get_intermediates()),
            "decrypted_private_key": text(c.get_decrypted_private_key()),
        }))
    elif op == "delete":
        mgr.delete_cert(sys.argv[4])
        print(json.dumps({"deleted": sys.argv[4]}))
    else:
        raise SystemExit("unknown operation %s" % op)


if __name__ == "__main__":
    main()
