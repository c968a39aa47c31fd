"""OpenKeel's helpers for running the real Magnum 23.0.0 services in interoperability tests.

Never for a real cloud: ``driver`` provisions nothing, ``noauth`` trusts its headers.
Made importable by putting this directory on PYTHONPATH (the ``openkeel_interop-1.0.dist-info``
beside it registers the driver's ``magnum.drivers`` entry point).
"""
