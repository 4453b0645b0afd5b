"""Pure: check tool arguments against the tool's schema and key each error by the field's JSON pointer.

Validation goes through protocol/schemas.py (local refs only, nothing raises). A form is lenient about remote
$refs on top of that: the form edits such a subtree as JSON, so `local_schema` lets it accept anything rather than
refuse every submission.
"""

from __future__ import annotations

from typing import Any

from inspector.protocol import schemas
from inspector.protocol.forms.schema import classify, properties_of, required_names
from inspector.protocol.json import pointer


def local_schema(schema: Any) -> Any:
    """The schema with every remote $ref (not "#..." nor its own $id plus "#...") accepting anything."""
    base = str(schema.get("$id", "")).split("#")[0] if isinstance(schema, dict) else ""
    return _without_remote_refs(schema, base)


def _without_remote_refs(schema: Any, base: str) -> Any:
    """A copy of the schema where each remote $ref accepts anything (its document is never fetched)."""
    if isinstance(schema, list):
        return [_without_remote_refs(s, base) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _without_remote_refs(v, base) for k, v in schema.items() if k not in ("enum", "const", "default",
                                                                                 "examples")}
    out.update({k: schema[k] for k in ("enum", "const", "default", "examples") if k in schema})
    ref = schema.get("$ref")
    if isinstance(ref, str) and not (ref.startswith("#") or (base and ref.startswith(base + "#"))):
        del out["$ref"]
    return out


def _entries(err: Any) -> Any:
    """(path, message) for an error, looking inside anyOf/oneOf for the one branch the value was meant for."""
    path = list(err.absolute_path)
    if err.validator in ("anyOf", "oneOf") and err.context:
        groups: dict = {}
        for e in err.context:
            groups.setdefault(e.relative_schema_path[0] if e.relative_schema_path else None, []).append(e)
        # A branch whose type or discriminator (a const/enum just below) does not match was not meant.
        meant = [es for es in groups.values() if not any(
            (e.validator == "type" and not e.relative_path) or
            (e.validator in ("const", "enum") and len(e.relative_path) == 1) for e in es)]
        if len(meant) == 1:
            for e in meant[0]:
                yield from _entries(e)
            return
        expected = [e.validator_value for es in groups.values() for e in es if e.validator == "type" and
                    not e.relative_path]
        if len(expected) == len(groups):
            yield path, f"{err.instance!r} is not of type " + " or ".join(map(repr, expected))
            return
    if err.validator == "required" and isinstance(err.instance, dict):
        for name in err.validator_value:
            if name not in err.instance and err.message == f"{name!r} is a required property":
                yield path + [name], err.message
                return
    yield path, err.message


def _empty_required(schema: Any, root: dict, value: Any, path: tuple, out: dict, stack: tuple = ()) -> None:
    """A required property sent as "": jsonschema's `required` accepts it, but a person who left the box empty
    most likely forgot it (finding 20); flagged like any other problem, so "Send anyway" still sends it."""
    node = classify(schema, root, stack)
    if node.kind != "object" or not isinstance(value, dict):
        return
    for name in sorted(required_names(node.schema)):
        if value.get(name) == "":
            out.setdefault(pointer(path + (name,)), []).append(f"{name!r} is required: it is empty")
    for name, sub in properties_of(node.schema).items():
        if isinstance(value.get(name), dict):
            _empty_required(sub, root, value[name], path + (name,), out, node.stack)


def validate(schema: dict, arguments: Any) -> dict[str, list[str]]:
    """jsonschema errors by JSON pointer of the field ("" for the whole form).  The dialect is the one
    ``$schema`` names (2020-12 if none); formats are checked; only local $refs are resolved."""
    out: dict[str, list[str]] = {}
    errors = schemas.validate(local_schema(schema), arguments, formats=True)
    if isinstance(errors, schemas.SchemaProblem):  # a malformed schema is reported, not crashed on
        return {"": [f"the schema could not be checked: {errors}"]}
    for err in errors:
        for path, message in _entries(err):
            messages = out.setdefault(pointer(path), [])
            if message not in messages:
                messages.append(message)
    return out


def empty_required(schema: Any, arguments: Any) -> dict[str, list[str]]:
    """Each required property sent as "", by JSON pointer (what the page flags besides `validate`)."""
    out: dict[str, list[str]] = {}
    _empty_required(schema, schema if isinstance(schema, dict) else {}, arguments, (), out)
    return out
