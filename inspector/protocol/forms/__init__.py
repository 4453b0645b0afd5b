"""Pure: JSON Schema → form fields, and a submitted form → typed tool arguments (no Flask, no I/O).

schema.py reduces a schema to widget kinds, build.py makes the fields, parse.py reads a posted form back and
validate.py checks the arguments; this module re-exports the public names (and `problems`: validation plus a
required property left empty, what a page form flags before sending).

``build_form(schema, values)`` turns a tool's ``inputSchema`` into a tree of `Field`; the page renders
it.  ``arguments_from_form(schema, pairs)`` turns the urlencoded pairs the browser posts back into typed JSON
arguments; ``validate(schema, arguments)`` checks them with jsonschema and keys each error by the field's
JSON pointer.  ``default_pairs(field)`` emits what a browser would submit for a pre-filled form.

Form names.  Every field has a *form key*: the JSON pointer of its value ("/size/width", "/tags/0"), except
that a ``oneOf``/``anyOf`` branch adds a segment ``@<i>`` ("/pet/@1/name": branch 1 of /pet) and
key/value rows live under ``~kv`` ("/env/~kv/0").  ``~kv`` cannot be an escaped property name (JSON pointer
escapes only make ``~0`` and ``~1``), and ``@<i>`` only follows a union's key, so names are never ambiguous.
Inputs are named ``<control>:<key>``:

    f:K        the value: text as typed, checkbox "true", select/multiselect options as JSON text
    set:K      optional boolean: "" (unset), "true" or "false"
    json:K     JSON text of a subtree the form cannot express (or whose value does not fit the form)
    null:K     "1" when the explicit null choice is selected (wins over everything under K)
    present:K  "1" to include an optional object/array/union (or an empty string) even when it looks empty
    branch:K   index of the chosen union branch
    row:K/N    one (empty) marker per array or key/value row, so a row with nothing submitted still exists
    kv-key:K/~kv/N   the key of a key/value row; its value is the field at key K/~kv/N

Rows are taken in the order their names first appear, so N may have gaps or be out of order (reordering
moves DOM nodes, it does not rename them).  A row template's key ends in ``~new`` (`INDEX`): to add a
row, clone it and replace that key, wherever it starts a name, with the same key ending in a fresh number.
Names containing ``~new`` are ignored (a template nested in a clone stays a template).

After a POST, re-render with ``build_form(schema, result.arguments)``: rows are renumbered 0..n-1, so each
field's ``pointer`` matches the keys of ``validate()`` and of ``FormResult.errors``.
"""

from inspector.protocol.forms.build import INDEX, Field, build_form, default_pairs, form_from_arguments
from inspector.protocol.forms.parse import FormResult, arguments_from_form
from inspector.protocol.forms.validate import empty_required, validate

__all__ = ["INDEX", "Field", "FormResult", "arguments_from_form", "build_form", "default_pairs", "empty_required",
           "form_from_arguments", "validate"]


def problems(schema: dict, arguments) -> dict[str, list[str]]:
    """What a page form flags before sending: the schema's errors, and required properties left empty."""
    out = validate(schema, arguments)
    for where, messages in empty_required(schema, arguments).items():
        out.setdefault(where, []).extend(messages)
    return out
