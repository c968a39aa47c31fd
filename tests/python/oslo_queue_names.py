"""oslo.messaging's own queue declarations for crates/rpc/tests/queue_manager.rs.

    python oslo_queue_names.py <transport_url> <exchange> <topic> <server> <hostname> \
        <processname> <lock_dir> <use_queue_manager: true|false>

Builds an RPC server (target topic / server, an ``echo`` endpoint) and an RPC client on one
transport configured from a config file as an operator writes it, makes one call, prints
``ready`` and waits for standard input to close; then stops the server, cleans up the
transport, prints ``stopped`` and exits. The test lists the broker's queues while it waits
and again after it has stopped.
"""
import os
import sys
import tempfile


def main():
    url, exchange, topic, server, hostname, processname, lock_dir, qm = sys.argv[1:9]
    from oslo_config import cfg
    import oslo_messaging as messaging

    f = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    f.write(
        f"[DEFAULT]\ntransport_url = {url}\ncontrol_exchange = {exchange}\n"
        f"[oslo_messaging_rabbit]\nuse_queue_manager = {qm}\n"
        f"hostname = {hostname}\nprocessname = {processname}\n"
        f"[oslo_concurrency]\nlock_path = {lock_dir}\n"
    )
    f.close()
    # the global CONF, as a service uses it: oslo.messaging and oslo.concurrency register
    # some of their options there when imported
    from oslo_concurrency import lockutils  # noqa: F401  ([oslo_concurrency] lock_path)

    conf = cfg.CONF
    conf(["--config-file", f.name], project="openkeel-test")
    os.unlink(f.name)

    transport = messaging.get_rpc_transport(conf)

    class Echo:
        target = messaging.Target(version="1.0")

        def echo(self, ctxt, **kwargs):
            return kwargs

    target = messaging.Target(topic=topic, server=server)
    rpc_server = messaging.get_rpc_server(transport, target, [Echo()])
    rpc_server.start()
    client = messaging.get_rpc_client(transport, messaging.Target(topic=topic), timeout=30)
    got = client.call({}, "echo", over="amqp")
    assert got == {"over": "amqp"}, got
    print("ready", flush=True)
    sys.stdin.read()
    rpc_server.stop()
    rpc_server.wait()
    transport.cleanup()
    print("stopped", flush=True)


if __name__ == "__main__":
    main()
