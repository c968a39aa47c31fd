#!/usr/bin/env python3
"""Render kolla-ansible's own magnum templates for a test inventory.

    kolla_render.py ROLES_DIR VARS_JSON OUT_DIR

ROLES_DIR is kolla-ansible's ``ansible/roles`` (from the package in
``$OPENKEEL_TEST_VENV/kolla-site``); VARS_JSON holds the values a minimal inventory and
``globals.yml`` give the variables the templates use (already resolved: no Ansible here).
For each service (``magnum-api``, ``magnum-conductor``) it writes, as kolla-ansible's
``roles/magnum/tasks/config.yml`` does into ``node_config_directory``:

* ``OUT_DIR/<service>/config.json`` from ``<service>.json.j2``;
* ``OUT_DIR/<service>/magnum.conf`` from ``magnum.conf.j2`` with ``service_name`` set,
  then merged with ``VARS["custom_magnum_conf"]`` (the operator's
  ``/etc/kolla/config/magnum.conf``; ``merge_configs``: later options win);
* ``OUT_DIR/magnum-api/magnum-api-uwsgi.ini`` from ``service-uwsgi-config``'s
  ``uwsgi.ini.j2`` with the variables ``config.yml`` passes to that role.

Filters kolla-ansible provides are implemented as the test inventory needs them
(``bool``, ``put_address_in_context``, ``kolla_address``).
"""
import configparser
import io
import ipaddress
import json
import os
import sys

import jinja2


def to_bool(v):
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "yes", "on", "1", "y", "t")


def put_address_in_context(addr, context):
    try:
        if ipaddress.ip_address(addr).version == 6 and context in ("url", "memcache"):
            return "[%s]" % addr if context == "url" else "inet6:[%s]" % addr
    except ValueError:
        pass
    return addr


def env_for(roles):
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(roles),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.filters["bool"] = to_bool
    env.filters["put_address_in_context"] = put_address_in_context
    env.filters["kolla_address"] = lambda iface, host=None: env.globals["api_interface_address"]
    return env


def merge_configs(texts):
    """kolla-ansible's merge_configs action: INI files merged, later options win."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    for text in texts:
        parser.read_string(text)
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def main():
    roles, vars_file, out = sys.argv[1:4]
    with open(vars_file) as f:
        variables = json.load(f)
    env = env_for(roles)
    env.globals.update(variables)
    services = ["magnum-api", "magnum-conductor"]
    for service in services:
        d = os.path.join(out, service)
        os.makedirs(d, exist_ok=True)
        ctx = dict(variables, service_name=service)
        config_json = env.get_template("magnum/templates/%s.json.j2" % service).render(ctx)
        json.loads(config_json)  # kolla-ansible would fail on invalid JSON too
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(config_json)
        conf = env.get_template("magnum/templates/magnum.conf.j2").render(ctx)
        custom = variables.get("custom_magnum_conf")
        with open(os.path.join(d, "magnum.conf"), "w") as f:
            f.write(merge_configs([conf, custom]) if custom else conf)
    # roles/magnum/tasks/config.yml: "Configure uWSGI for Magnum"
    uwsgi = dict(
        variables,
        service_name="magnum-api",
        service_uwsgi_config_host=put_address_in_context(variables["api_interface_address"], "url"),
        service_uwsgi_config_http_port=variables["magnum_api_listen_port"],
        service_uwsgi_config_log_file_chmod="644",
        service_uwsgi_config_module="magnum.wsgi.api:application",
        service_uwsgi_config_tls_backend=variables["magnum_enable_tls_backend"],
        service_uwsgi_config_tls_cert="/etc/magnum/certs/magnum-cert.pem",
        service_uwsgi_config_tls_key="/etc/magnum/certs/magnum-key.pem",
        service_uwsgi_config_workers=variables["magnum_api_workers"],
        service_uwsgi_config_uid="magnum",
        # the role's defaults (roles/service-uwsgi-config/defaults/main.yml)
        service_uwsgi_config_log_dir="magnum",
        service_uwsgi_config_log_file="magnum-api-uwsgi.log",
        service_uwsgi_config_socket_port="",
        service_uwsgi_config_worker_timeout=80,
    )
    ini = env.get_template("service-uwsgi-config/templates/uwsgi.ini.j2").render(uwsgi)
    with open(os.path.join(out, "magnum-api", "magnum-api-uwsgi.ini"), "w") as f:
        f.write(ini)


if __name__ == "__main__":
    main()
