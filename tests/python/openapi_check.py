#!/usr/bin/env python3
"""Check OpenKeel's OpenAPI document (docs/openapi.json) and real answers against it.

    openapi_check.py document DOC
        The document is a valid OpenAPI 3.1 document (openapi-spec-validator).

    openapi_check.py exchanges DOC EXCHANGES
        Every recorded exchange (a JSON list of {"method", "path", "status", "headers",
        "body"}: the request line's method and path, the answer's status, its headers
        (lower-case names) and its body as text) matches the document: the path and method
        are an operation of the document, the status is one of its responses, the response's
        required headers are there, and the body validates against the response's schema
        (JSON Schema 2020-12, with the document's components). An answer to a path or method
        no operation has must be a 404 / 405 (406: the Accept check) with the document's
        shared `Error` response. Prints a JSON report
        {"problems": [...], "covered": ["GET /v1/clusters", ...]} where `covered` lists the
        operations seen answering with a success status; exits 1 when there are problems.

Used by crates/cli/tests/openapi.rs with the test venv's Python (tests/python/requirements.txt).
"""

import json
import sys
from urllib.parse import urlsplit

import jsonschema
import referencing
import referencing.jsonschema

DOC_URI = "urn:openkeel:openapi"


def check_document(path):
    try:
        from openapi_spec_validator import validate
    except ImportError as e:  # the venv predates requirements.txt's openapi-spec-validator
        print(f"openapi-spec-validator is not installed in this venv ({e}); tests/run.sh rebuilds it",
              file=sys.stderr)
        return 2
    with open(path) as f:
        doc = json.load(f)
    validate(doc)
    print(f"{path}: a valid OpenAPI {doc.get('openapi')} document")
    return 0


def resolve(doc, node):
    """Follow a local `$ref` (components.responses / headers)."""
    while isinstance(node, dict) and "$ref" in node:
        target = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def match_path(doc, path):
    """The path template that serves `path`: literal segments beat parameters."""
    segs = [s for s in path.split("/") if s]
    best, best_score = None, -1
    for template in doc["paths"]:
        tsegs = [s for s in template.split("/") if s]
        if len(tsegs) != len(segs):
            continue
        score = 0
        for t, s in zip(tsegs, segs):
            if t.startswith("{") and t.endswith("}"):
                continue
            if t != s:
                break
            score += 1
        else:
            if score > best_score:
                best, best_score = template, score
    return best


def check_exchanges(doc_path, exchanges_path):
    with open(doc_path) as f:
        doc = json.load(f)
    with open(exchanges_path) as f:
        exchanges = json.load(f)
    resource = referencing.Resource.from_contents(
        doc, default_specification=referencing.jsonschema.DRAFT202012)
    registry = referencing.Registry().with_resource(DOC_URI, resource)

    def validate(schema, instance):
        if "$ref" in schema and schema["$ref"].startswith("#/"):
            schema = {"$ref": DOC_URI + schema["$ref"]}
        validator = jsonschema.Draft202012Validator(schema, registry=registry)
        return sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))

    problems, covered = [], set()
    for x in exchanges:
        method, status = x["method"].upper(), x["status"]
        path = urlsplit(x["path"]).path
        where = f"{method} {x['path']} -> {status}"
        template = match_path(doc, path)
        op = doc["paths"].get(template, {}).get(method.lower()) if template else None
        if op is None:
            # Outside the operations: pecan's routing answers (404 for a path, 405 for a
            # method; 406 when the Accept check refuses first), the shared error response.
            if status not in (404, 405, 406):
                problems.append(f"{where}: no operation of the document serves it")
                continue
            response = doc["components"]["responses"]["Error"]
        else:
            response = op["responses"].get(str(status))
            if response is None:
                problems.append(f"{where}: status {status} is not declared for {method} {template}")
                continue
        response = resolve(doc, response)
        headers = {k.lower(): v for k, v in x["headers"].items()}
        for name, h in response.get("headers", {}).items():
            h = resolve(doc, h)
            if h.get("required") and name.lower() not in headers:
                problems.append(f"{where}: required header {name} is missing")
        content = response.get("content")
        body = x["body"]
        if not content:
            if body:
                problems.append(f"{where}: a body where the document declares none: {body[:200]}")
        elif method == "HEAD":
            pass
        else:
            ctype = headers.get("content-type", "").split(";")[0].strip()
            media = content.get(ctype)
            if media is None:
                problems.append(f"{where}: content type {ctype!r} is not one of {sorted(content)}")
                continue
            if ctype == "application/json":
                try:
                    instance = json.loads(body)
                except ValueError as e:
                    problems.append(f"{where}: the body is not JSON ({e}): {body[:200]}")
                    continue
                for err in validate(media["schema"], instance):
                    at = "/".join(str(p) for p in err.absolute_path)
                    problems.append(f"{where}: body at /{at}: {err.message}")
        if 200 <= status < 300:
            covered.add(f"{method} {template}")
    print(json.dumps({"problems": problems, "covered": sorted(covered)}, indent=1))
    return 1 if problems else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "document":
        return check_document(argv[2])
    if len(argv) == 4 and argv[1] == "exchanges":
        return check_exchanges(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
