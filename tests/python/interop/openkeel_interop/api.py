"""Run Magnum 23.0.0's ``magnum-api`` (``magnum.cmd.api:main``, unchanged) so that its
``[conductor] topic`` setting takes effect.

``magnum.conductor.api.API.__init__`` takes ``topic=CONF.conductor.topic`` as a default
argument, which Python evaluates when the module is imported: the console script imports it
before it parses the configuration, so the real magnum-api always sends to the default topic
``magnum-conductor`` whatever magnum.conf says (see docs/differences.md).  The interoperability
tests give every test its own topic so that tests running at the same time on one broker never
consume each other's requests; this runner parses the configuration once before that import,
then clears it and runs the console script's ``main`` as usual.

    python -m openkeel_interop.api --config-file magnum.conf
"""
import sys


def main():
    from oslo_log import log as logging

    import magnum.conf

    conf = magnum.conf.CONF
    logging.register_options(conf)
    conf(sys.argv[1:], project="magnum")
    from magnum.cmd import api  # binds API(topic=<the configured topic>)

    conf.clear()
    sys.exit(api.main())


if __name__ == "__main__":
    main()
