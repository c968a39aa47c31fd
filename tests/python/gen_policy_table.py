#!/usr/bin/env python3
"""Write OpenKeel's policy decision table from the real oslo.policy and Magnum 23.0.0.

Every one of Magnum's 66 registered rules (plus custom rules from operator policy files) is
evaluated by the real ``oslo_policy.policy.Enforcer`` for a table of credentials (built with
Magnum's own ``RequestContext.to_dict()``) and targets, under several configurations. The Rust
test ``crates/auth/tests/policy_table.rs`` asserts that OpenKeel's engine gives the same answer
for every cell, parses every rule to the same tree (``str(check)``), registers the same
defaults, and generates the same sample file.

Outputs (all under ``crates/auth/tests/data/``):

* ``policy_decisions.json``          the table
* ``policy/<config>/...``            the policy files the configurations load
* ``oslopolicy-sample-magnum.yaml``  ``oslopolicy-sample-generator --namespace magnum``

Usage (see tests/python/README.md)::

    python3 -m venv /var/tmp/openkeel-policy-venv
    /var/tmp/openkeel-policy-venv/bin/pip install magnum==23.0.0
    /var/tmp/openkeel-policy-venv/bin/python tests/python/gen_policy_table.py [--check]
"""

import argparse
import copy
import importlib.metadata
import json
import logging
import pathlib
import shutil
import sys
import tempfile
import warnings

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / 'crates' / 'auth' / 'tests' / 'data'
TABLE = 'policy_decisions.json'
SAMPLE = 'oslopolicy-sample-magnum.yaml'
MAGNUM_VERSION = '23.0.0'

# One character per decision; errors are the Python exception oslo.policy lets escape.
CODES = {
    True: 'T',
    False: 'F',
    'TypeError': 't',
    'ValueError': 'v',
    'SyntaxError': 's',
    'AttributeError': 'a',
    'RecursionError': 'r',
}

PA, PB = 'project-a', 'project-b'
UA, UB = 'user-a', 'user-b'
REQUEST_ID = 'req-00000000-0000-4000-8000-000000000000'

# name -> RequestContext arguments (roles as Magnum splits X-Roles; a missing header is [""]).
CREDENTIALS = [
    ('admin_a', dict(roles=['admin', 'member', 'reader'], project_id=PA, user_id=UA)),
    ('admin_only_a', dict(roles=['admin'], project_id=PA, user_id=UA)),
    ('upper_case_admin_a', dict(roles=['ADMIN'], project_id=PA, user_id=UA)),
    ('member_a', dict(roles=['member', 'reader'], project_id=PA, user_id=UA)),
    ('member_only_a', dict(roles=['member'], project_id=PA, user_id=UA)),
    ('mixed_case_member_a', dict(roles=['Member', 'READER'], project_id=PA, user_id=UA)),
    ('reader_a', dict(roles=['reader'], project_id=PA, user_id=UA)),
    ('untrimmed_roles_a', dict(roles=['reader', ' member'], project_id=PA, user_id=UA)),
    ('member_a_as_user_b', dict(roles=['member', 'reader'], project_id=PA, user_id=UB)),
    ('member_b', dict(roles=['member', 'reader'], project_id=PB, user_id=UB)),
    ('reader_b', dict(roles=['reader'], project_id=PB, user_id=UB)),
    ('admin_b', dict(roles=['admin', 'member', 'reader'], project_id=PB, user_id=UB)),
    ('no_roles_header_a', dict(roles=[''], project_id=PA, user_id=UA)),
    ('empty_roles_a', dict(roles=[], project_id=PA, user_id=UA)),
    ('other_role_a', dict(roles=['heat_stack_owner'], project_id=PA, user_id=UA)),
    ('member_no_project', dict(roles=['member', 'reader'], project_id=None, user_id=UA)),
    ('reader_no_project_no_user', dict(roles=['reader'], project_id=None, user_id=None)),
    ('is_admin_flag_without_role_a', dict(roles=[], project_id=PA, user_id=UA, is_admin=True)),
    ('admin_context', dict(roles=[], project_id=None, user_id=None, is_admin=True)),
    ('system_scoped_admin', dict(roles=['admin', 'member', 'reader'], project_id=PA,
                                 user_id=UA, system_scope='all')),
    ('numeric_ids_member', dict(roles=['member', 'reader'], project_id='123', user_id='True')),
    ('legacy_role_a', dict(roles=['legacy'], project_id=PA, user_id=UA,
                           user_domain_id='default')),
]

TARGETS = [
    ('own_a', {'project_id': PA, 'user_id': UA}),
    ('a_other_user', {'project_id': PA, 'user_id': UB}),
    ('b_user_b', {'project_id': PB, 'user_id': UB}),
    ('b_user_a', {'project_id': PB, 'user_id': UA}),
    ('empty', {}),
    ('nulls', {'project_id': None, 'user_id': None}),
    ('project_only_a', {'project_id': PA}),
    ('user_only_a', {'user_id': UA}),
    ('cluster_a', {
        'id': 7, 'uuid': '5d12f6fd-a196-4bf0-ae4c-1f639a523a52', 'name': 'k8s',
        'project_id': PA, 'user_id': UA, 'cluster_template_id': 'ct-1',
        'keypair': None, 'labels': {'kube_tag': 'v1.30.1'}, 'master_count': 1,
        'node_count': 3, 'status': 'CREATE_COMPLETE', 'master_addresses': ['10.0.0.5'],
        'docker_volume_size': None, 'create_timeout': 60,
    }),
    ('odd_types', {'project_id': 123, 'user_id': True}),
    ('custom', {'project_id': PA, 'user_id': UA, 'role': 'member', 'enabled': True,
                'count': 1, 'domain_id': 'default', 'role.name': 'Member'}),
]

# Operator policy files per configuration (written under crates/auth/tests/data/policy/).
OVERRIDES_POLICY_YAML = '''\
# Overrides exercising the rule language.
"context_is_admin": "role:admin or role:cloud_admin"
"cluster:create": "role:member and not role:reader"
"cluster:get": "(role:reader or role:member) and (project_id:%(project_id)s or is_admin:True)"
"cluster:delete": "rule:custom:and_or"
"custom:and_or": "role:admin or role:member and role:reader"
"custom:or_and_not": "role:reader and not role:member or role:admin"
"custom:not_paren": "not (role:member or role:reader)"
"custom:nested_parens": "((role:admin or (role:member and project_id:%(project_id)s)) and not user_id:%(missing)s)"
"custom:upper_ops": "role:member AND NOT role:admin OR role:heat_stack_owner"
"custom:generic_literal": "'member':%(role)s"
"custom:literal_name": "'Member':%(role.name)s"
"custom:true_literal": "True:%(enabled)s"
"custom:number_literal": "1:%(count)s"
"custom:dotted_creds": "user_domain_id:%(domain_id)s"
"custom:role_from_target": "role:%(role)s"
"custom:roles_generic": "roles:member"
"custom:none_match": "project_id:%(project_id)s and user_id:%(user_id)s"
"custom:rule_ref": "rule:custom:and_or or rule:undefined_rule"
"custom:undefined_only": "rule:undefined_rule"
"custom:always": "@"
"custom:never": "!"
"custom:empty": ""
"custom:malformed": "role:admin or"
"custom:quoted": "'role:admin'"
"custom:nocolon": "admin"
"custom:loop": "rule:custom:loop"
"custom:short_loop": "@ or rule:custom:short_loop"
"custom:type_error": "project_id.x:y"
"custom:syntax_error": "role:member and 'x:y"
"custom:format_error": "project_id:100%"
'''

OVERRIDES_DIR_FILES = {
    '10-first.yaml': '"custom:always": "!"\n"custom:from_dir": "role:reader"\n',
    '20-second.json': '{"custom:always": "@", "custom:from_dir": "role:member"}\n',
    '.hidden.yaml': '"custom:always": "!"\n"custom:hidden": "@"\n',
}

LEGACY_POLICY_JSON = '''\
{
    "default": "role:admin",
    "custom:list": [["role:member", "project_id:%(project_id)s"], ["role:admin"]],
    "custom:list_bare_strings": ["role:reader", "role:member"],
    "custom:list_empty": [],
    "custom:list_of_empty": [[]],
    "custom:list_bad_inner": [["role:member", 5]],
    "custom:null": null,
    "custom:false": false,
    "cluster:delete": "rule:nonexistent_rule",
    "cluster:update": "rule:admin_or_owner"
}
'''

DEPRECATED_NAMES_YAML = '''\
"rule:admin_or_owner": "role:legacy or is_admin:True"
"rule:admin_or_user": "rule:admin_or_project_member_user"
"admin_or_project_member": "role:member"
'''

CONFIGS = [
    dict(name='defaults', policy_file=None, policy_dirs=[], files={},
         enforce_new_defaults=True),
    dict(name='legacy_defaults', policy_file=None, policy_dirs=[], files={},
         enforce_new_defaults=False),
    dict(name='overrides', policy_file='policy.yaml', policy_dirs=['policy.d'],
         files=dict({'policy.yaml': OVERRIDES_POLICY_YAML},
                    **{'policy.d/' + k: v for k, v in OVERRIDES_DIR_FILES.items()}),
         enforce_new_defaults=True),
    dict(name='legacy_json', policy_file='policy.json', policy_dirs=['policy.d'],
         files={'policy.json': LEGACY_POLICY_JSON}, enforce_new_defaults=False),
    dict(name='deprecated_names', policy_file='policy.yaml', policy_dirs=[],
         files={'policy.yaml': DEPRECATED_NAMES_YAML}, enforce_new_defaults=True),
]

UNREGISTERED = ['no:such_rule', 'custom:hidden']

# Checks evaluated directly (Enforcer.enforce with a parsed check tree) on odd data.
EXPRESSION_CREDENTIALS = [
    ('rich', {
        'roles': ['Admin', 'member'], 'project_id': PA, 'user_id': UA, 'is_admin': False,
        'user': {'domain': {'id': 'd1'}, 'groups': [{'id': 'g1'}, {'id': 'g2'}]},
        'tags': [['x'], 'y'], 'n': 3, 'f': 1.5, 'none': None, 'flag': True,
    }),
    ('roles_is_a_string', {'roles': 'admin', 'project_id': PA}),
    ('roles_has_a_number', {'roles': ['member', 1], 'project_id': PA}),
    ('roles_is_null', {'roles': None, 'project_id': None}),
    ('no_roles_key', {'project_id': PA, 'user_id': UA}),
]

EXPRESSION_TARGETS = [
    ('rich', {
        'project_id': PA, 'uid': None, 'num': 3, 'g': 'g2', 'role.name': 'Member',
        'enabled': True, 'one': 1, 'onef': 1.0, 'none': None, 'pct': '50%',
        'list': ['a', 'b'], 'dict': {'k': 'v'}, 's': "x'y", 'r': 'ADMIN',
    }),
    ('empty', {}),
    ('nulls', {'project_id': None, 'user_id': None}),
]

EXPRESSIONS = [
    '@', '!', '', '   ', 'not @', '(@)', '@ or !', '! and @', 'not (! or !)',
    'role:admin', 'role:ADMIN', 'role:a', 'role:%(r)s', 'role:%(missing)s', 'role:%(list)s',
    'role:member and not role:reader', 'role:admin or role:x and !',
    'role:x or role:admin and role:member', 'not role:admin and role:member',
    '(role:x or role:admin) and (role:member or role:y)', 'role:admin or',
    'project_id:%(project_id)s', 'project_id:project-a', "project_id:'project-a'",
    "'project-a':%(project_id)s", 'user_id:%(uid)s', 'user_id:%(user_id)s',
    'none:%(none)s', 'none:None', 'project_id:None', 'is_admin:False', 'is_admin:True',
    'flag:True', 'n:%(num)s', 'n:3', 'f:1.5', 'f:%(onef)s',
    'user.domain.id:d1', 'user.groups.id:%(g)s', 'user.groups:%(g)s', 'user.missing.x:y',
    'tags:y', "tags:['x']", 'roles:Admin', 'roles:admin',
    "'Member':%(role.name)s", 'True:%(enabled)s', 'False:%(enabled)s', '1:%(one)s',
    '1:%(onef)s', '1.0:%(onef)s', 'None:%(none)s', '-1:-1', '0x10:16', "[1,'a']:[1, 'a']",
    "'x''y':xy", '1_000:1000', '1e3:1000.0', '2j:2j', 'a-b:x', 'set():set()', '{}:{}',
    'project_id.x:y', 'none.x:y', "'Member:x", '1abc:x', 'a.if:x', '%(project_id)s:x',
    'project_id:%(pct)s', 'project_id:100%', 'project_id:%(num)d', 'project_id:%(num)03d',
    'project_id:%(project_id)d', 'project_id:%(project_id)r', 's:%(s)s', 'project_id:%%',
    'rule:context_is_admin', 'rule:no_such_rule', 'rule:admin_or_owner',
    'not rule:no_such_rule', 'nocolon', "'role:admin'", '(role:admin', 'role:admin)',
]

# Parsed only (str(check) compared), besides every expression and default check string.
PARSE_ONLY = [
    'role:a or role:b and role:c', 'role:a and role:b or role:c',
    'role:a or role:b and role:c and role:d or role:e', 'not not role:a',
    'not (role:a or role:b)', '((role:a))', 'role:x or (role:a and role:b) and role:c',
    '(role:a and role:b) and role:c', "('a')", "(role:a or 'x')", '"x" or role:a', 'and',
    '()', 'not', 'role:a role:b', 'role:a\tor\nrole:b', 'role:compute:admin',
    'http://example.invalid/%(x)s', 'https:x', 'rule:a or rule:b or rule:c',
    '(role:a or role:b) or (role:c or role:d)', 'not role:a or not role:b and not role:c',
]


def decision(fn):
    try:
        return CODES[bool(fn())]
    except Exception as e:  # noqa: BLE001 - what escapes oslo.policy is the point
        name = type(e).__name__
        if name not in CODES:
            raise
        return CODES[name]


def make_enforcer(policy, cfg, config):
    """An Enforcer configured as Magnum's policy.init() would be for this configuration."""
    conf = cfg.ConfigOpts()
    args = []
    if config.get('dir'):
        args = ['--config-dir', str(config['dir'])]
    conf(args, project='magnum', default_config_files=[])
    policy_file = config['policy_file'] or 'openkeel-no-such-policy-file.yaml'
    enforcer = policy.Enforcer(conf, policy_file=policy_file)
    conf.set_override('policy_dirs', config['policy_dirs'], 'oslo_policy')
    conf.set_override('enforce_new_defaults', config['enforce_new_defaults'], 'oslo_policy')
    from magnum.common import policies
    enforcer.register_defaults(policies.list_rules())
    enforcer.load_rules()
    return enforcer


def build_credentials(context, defaults_enforcer):
    out = {}
    for name, kw in CREDENTIALS:
        kw = dict(kw)
        is_admin = kw.pop('is_admin', None)
        system_scope = kw.pop('system_scope', None)
        ctx = context.RequestContext(is_admin=False, request_id=REQUEST_ID,
                                     user_name=kw.get('user_id'),
                                     project_name=kw.get('project_id'), **kw)
        if system_scope:
            ctx.system_scope = system_scope
        if is_admin is None:
            # magnum.common.policy.check_is_admin, as RequestContext(is_admin=None) does.
            is_admin = defaults_enforcer.enforce('context_is_admin', {}, ctx.to_dict())
        ctx.is_admin = bool(is_admin)
        out[name] = ctx.to_dict()
    return out


def row(enforcer, rule, creds, targets):
    cells = []
    for cname in creds:
        cells.append(''.join(
            decision(lambda: enforcer.enforce(rule, copy.deepcopy(targets[t]),
                                              copy.deepcopy(creds[cname])))
            for t in targets))
    return ' '.join(cells)


def generate(out_dir):
    from oslo_config import cfg
    from oslo_policy import _parser
    from oslo_policy import generator
    from oslo_policy import policy
    from magnum.common import context
    from magnum.common import policies

    version = importlib.metadata.version('magnum')
    if version != MAGNUM_VERSION:
        sys.exit(f'magnum {MAGNUM_VERSION} required, found {version}')

    data = out_dir
    policy_root = data / 'policy'
    if policy_root.exists():
        shutil.rmtree(policy_root)
    for config in CONFIGS:
        if config['files']:
            config['dir'] = policy_root / config['name']
            for rel, text in config['files'].items():
                path = config['dir'] / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        else:
            config['dir'] = None

    registered = list(policies.list_rules())
    defaults_enforcer = make_enforcer(policy, cfg, CONFIGS[0])
    creds = build_credentials(context, defaults_enforcer)
    targets = dict(TARGETS)

    table = {
        'generated_by': 'tests/python/gen_policy_table.py',
        'versions': {
            'magnum': version,
            'oslo.policy': importlib.metadata.version('oslo.policy'),
            'oslo.context': importlib.metadata.version('oslo.context'),
            'python': sys.version.split()[0],
        },
        'codes': {v: k for k, v in CODES.items()},
        'defaults': [],
        'credentials': creds,
        'targets': targets,
        'configs': [],
        'expressions': {},
        'parse': {},
    }

    for r in registered:
        d = r.deprecated_rule
        table['defaults'].append({
            'name': r.name,
            'check_str': r.check_str,
            'description': r.description,
            'operations': list(getattr(r, 'operations', None) or []),
            'documented': hasattr(r, 'operations'),
            'scope_types': r.scope_types,
            'deprecated_rule': None if d is None else {
                'name': d.name, 'check_str': d.check_str,
                'deprecated_reason': d.deprecated_reason,
                'deprecated_since': d.deprecated_since,
            },
            'deprecated_for_removal': r.deprecated_for_removal,
            'deprecated_reason': r.deprecated_reason,
            'deprecated_since': r.deprecated_since,
        })

    for config in CONFIGS:
        enforcer = make_enforcer(policy, cfg, config)
        names = [r.name for r in registered]
        for name in enforcer.rules:
            if name not in names:
                names.append(name)
        names += [n for n in UNREGISTERED if n not in names]
        table['configs'].append({
            'name': config['name'],
            'options': {
                'config_dir': (None if config['dir'] is None
                               else str(config['dir'].relative_to(data))),
                'policy_file': config['policy_file'],
                'policy_dirs': config['policy_dirs'],
                'enforce_new_defaults': config['enforce_new_defaults'],
                'default_rule': 'default',
            },
            'effective': {k: str(v) for k, v in enforcer.rules.items()},
            'decisions': {n: row(enforcer, n, creds, targets) for n in names},
        })

    ecreds = dict(EXPRESSION_CREDENTIALS)
    etargets = dict(EXPRESSION_TARGETS)
    expr_decisions = {}
    for text in EXPRESSIONS:
        cells = []
        for cname in ecreds:
            cells.append(''.join(
                decision(lambda: defaults_enforcer.enforce(
                    _parser.parse_rule(text), copy.deepcopy(etargets[t]),
                    copy.deepcopy(ecreds[cname])))
                for t in etargets))
        expr_decisions[text] = ' '.join(cells)
    table['expressions'] = {
        'credentials': ecreds,
        'targets': etargets,
        'decisions': expr_decisions,
    }

    to_parse = []
    for r in registered:
        to_parse.append(r.check_str)
        if r.deprecated_rule:
            to_parse.append(r.deprecated_rule.check_str)
    to_parse += EXPRESSIONS + PARSE_ONLY
    for text in to_parse:
        table['parse'][text] = str(_parser.parse_rule(text))

    (data / TABLE).write_text(json.dumps(table, indent=1, ensure_ascii=False) + '\n')
    generator._generate_sample(['magnum'], str(data / SAMPLE))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='generate into a temporary directory and fail if the checked-in '
                             'data differs')
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    warnings.simplefilter('ignore')

    if not args.check:
        DATA.mkdir(parents=True, exist_ok=True)
        generate(DATA)
        print(f'wrote {DATA / TABLE}, {DATA / SAMPLE} and {DATA / "policy"}/')
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        generate(tmp)
        stale = []
        for path in sorted(tmp.rglob('*')):
            if path.is_file():
                rel = path.relative_to(tmp)
                mine = DATA / rel
                if not mine.exists() or mine.read_bytes() != path.read_bytes():
                    stale.append(str(rel))
        if stale:
            sys.exit('stale policy test data (regenerate with '
                     'tests/python/gen_policy_table.py): ' + ', '.join(stale))
        print('policy test data is current')


if __name__ == '__main__':
    main()
