"""Run Magnum 23.0.0's own ``magnum-conductor`` / ``magnum-api`` entry points (unchanged) for
OpenKeel's interoperability tests::

    python -m openkeel_interop.run conductor --config-file magnum.conf
    python -m openkeel_interop.run api --config-file magnum.conf

Two things differ from the console scripts, both about running inside a test:

* **The test process is watched.**  The services run in their own process group (so the test
  can stop the conductor's forked worker with them); a group of its own does not get the
  terminal's Ctrl-C, and nothing else stops it when the test process dies without running its
  clean-up (killed, timed out).  A thread here notices when the parent process is gone and
  kills the whole group.
* **magnum-api honours ``[conductor] topic``.**  ``magnum.conductor.api.API.__init__`` takes
  ``topic=CONF.conductor.topic`` as a default argument, evaluated when the module is imported:
  the console script imports it before it parses the configuration, so the real magnum-api
  always sends to the default topic ``magnum-conductor`` whatever magnum.conf says (see
  docs/differences.md).  The tests give every test its own topic so that tests running at the
  same time on one broker never consume each other's requests; for ``api`` the configuration
  is parsed once before that import, then cleared, and ``main`` runs as usual.
"""
import os
import signal
import sys
import threading
import time


def _watch_parent():
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="openkeel-parent-watch",
                     daemon=True).start()


def _bind_conductor_topic(argv):
    from oslo_log import log as logging

    import magnum.conf

    conf = magnum.conf.CONF
    logging.register_options(conf)
    conf(argv, project="magnum")
    import magnum.conductor.api  # noqa: F401  binds API(topic=<the configured topic>)

    conf.clear()


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("api", "conductor"):
        sys.exit("usage: python -m openkeel_interop.run api|conductor "
                 "--config-file FILE")
    which = sys.argv[1]
    sys.argv = [which] + sys.argv[2:]
    _watch_parent()
    if which == "api":
        _bind_conductor_topic(sys.argv[1:])
        from magnum.cmd import api as cmd
    else:
        from magnum.cmd import conductor as cmd
    sys.exit(cmd.main())


if __name__ == "__main__":
    main()
