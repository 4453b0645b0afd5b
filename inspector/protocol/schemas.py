"""Pure: the one way this inspector builds a jsonschema validator for a schema a server sent.

The policy, the same for the tool form, structuredContent on the page, "do the inputs still fit", the protocol
checker and the tool review:
- the dialect is the one `$schema` names (2020-12 when none, or when it names one jsonschema does not know);
- only local `$ref`s resolve ("#/$defs/x", or the schema's own `$id` plus a fragment): nothing is ever fetched or
  retrieved, since a server's schema must not make us open URLs or files;
- nothing raises: a malformed schema, an unresolvable `$ref`, an unknown type or a schema that recurses without end
  comes back as a `SchemaProblem` for the caller to report.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.exceptions import SchemaError, ValidationError, best_match

from inspector.protocol.json import pointer


@dataclass(frozen=True)
class SchemaProblem:
    """Why a schema cannot be used to check values."""

    message: str
    """One line: what is wrong ("Unresolvable: https://example.invalid/x.json", a metaschema error, ...)."""
    where: tuple = ()
    """The place inside the schema, when the metaschema check names one."""

    @property
    def pointer(self) -> str:
        """`where` as a JSON pointer ("" for the whole schema)."""
        return pointer(self.where)

    def __str__(self) -> str:
        return self.message


def check(schema: Any) -> SchemaProblem | None:
    """A problem when `schema` is not valid for its own dialect (the metaschema check), else None."""
    found = validator(schema)
    return found if isinstance(found, SchemaProblem) else None


def validator(schema: Any, *, formats: bool = False) -> Any:
    """A validator for `schema` under the policy above, or a SchemaProblem. `formats`: check "format" too."""
    if not isinstance(schema, (dict, bool)):
        return SchemaProblem("the schema is not an object")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an unknown $schema falls back to 2020-12
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        # An empty registry with no retrieve: a $ref outside the schema is unresolvable, never fetched.
        return cls(schema, registry=referencing.Registry(),
                   format_checker=cls.FORMAT_CHECKER if formats else None)
    except SchemaError as exc:
        return SchemaProblem(exc.message, tuple(exc.absolute_path))
    except Exception as exc:  # noqa: BLE001 - a server's schema can make jsonschema raise anything
        return _problem(exc)


def errors(checker: Any, value: Any) -> list[ValidationError] | SchemaProblem:
    """Every error of `value` against a validator (from `validator`, or its `.evolve(schema=...)`), or the
    SchemaProblem that stopped the check; a SchemaProblem given as `checker` comes back unchanged."""
    if isinstance(checker, SchemaProblem):
        return checker
    try:
        return list(checker.iter_errors(value))  # $refs resolve lazily: an unresolvable one raises only here
    except Exception as exc:  # noqa: BLE001 - see validator()
        return _problem(exc)


def validate(schema: Any, value: Any, *, formats: bool = False) -> list[ValidationError] | SchemaProblem:
    """`errors(validator(schema), value)`."""
    return errors(validator(schema, formats=formats), value)


def best_error(schema: Any, value: Any) -> ValidationError | SchemaProblem | None:
    """The most relevant error (jsonschema's best_match), None when the value fits, or the SchemaProblem."""
    found = validate(schema, value)
    return found if isinstance(found, SchemaProblem) else best_match(found)


def is_valid(schema: Any, value: Any) -> bool | None:
    """Whether the value fits; None when the schema cannot be used."""
    found = validate(schema, value)
    return None if isinstance(found, SchemaProblem) else not found


def _problem(exc: BaseException) -> SchemaProblem:
    if isinstance(exc, RecursionError):
        return SchemaProblem("the schema recurses without end")
    if isinstance(exc, SchemaError):
        return SchemaProblem(exc.message, tuple(exc.absolute_path))
    if isinstance(exc, referencing.exceptions.Unresolvable):
        # e.g. "Unresolvable: https://example.invalid/x.json", "PointerToNowhere: '/$defs/missing' does not exist"
        return SchemaProblem(f"unresolvable $ref ({exc}); only local $refs are followed")
    return SchemaProblem(f"{type(exc).__name__}: {exc}")
