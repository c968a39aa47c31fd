"""A paste filter that takes the place of keystonemiddleware's ``authtoken`` in magnum-api's
pipeline for OpenKeel's interoperability tests.  It validates nothing.

Magnum's ContextHook builds the request context from the identity headers authtoken sets.
This filter passes a request that already carries ``X-User-Id``, ``X-Project-Id`` or
``X-Roles`` through untouched; for any other request it sets those three and ``X-User-Name`` / ``X-Project-Name`` from
the filter's options (the five headers OpenKeel's own ``[openkeel] auth_strategy = noauth``
fills in, so both APIs build the same context)::

    [filter:noauth]
    paste.filter_factory = openkeel_interop.noauth:filter_factory
    user_id = ...
    project_id = ...
    roles = admin,member,reader

``X-Auth-Token`` is left as the client sent it (Magnum uses it to reach Glance, Nova and
Neutron on the caller's behalf).
"""

_IDENTITY = ("HTTP_X_USER_ID", "HTTP_X_PROJECT_ID", "HTTP_X_ROLES")


class NoAuth(object):

    def __init__(self, app, options):
        self.app = app
        self.headers = {
            "HTTP_X_USER_ID": options.get("user_id", "okt-admin"),
            "HTTP_X_USER_NAME": options.get("user_name", "admin"),
            "HTTP_X_PROJECT_ID": options.get("project_id", "okt-project"),
            "HTTP_X_PROJECT_NAME": options.get("project_name", "admin"),
            "HTTP_X_ROLES": options.get("roles", "admin,member,reader"),
        }

    def __call__(self, environ, start_response):
        if not any(environ.get(k) for k in _IDENTITY):
            environ.update(self.headers)
        return self.app(environ, start_response)


def filter_factory(global_conf, **local_conf):
    options = dict(global_conf, **local_conf)
    return lambda app: NoAuth(app, options)
