"""OpenAPI: the engine's ``scopa-match/1`` JSON Schema as components of the API schema.

The engine generates the record's JSON Schema from its msgspec types (the same one published in
``docs/record-schema.json``); its ``$defs`` become ``components/schemas/ScopaMatch*`` so the
submission endpoint's request body is the real record format, not a loose object.
"""

import json
import logging
from functools import lru_cache

from drf_spectacular.generators import SchemaGenerator

logger = logging.getLogger(__name__)

RECORD_COMPONENT = "ScopaMatchRecord"
RECORD_REF = {"$ref": f"#/components/schemas/{RECORD_COMPONENT}"}


def _component_name(def_name: str) -> str:
    if def_name == "RecordInput":
        return RECORD_COMPONENT
    return "ScopaMatch" + def_name.removesuffix("Input")


def _rewrite_refs(node):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "required" and value == []:
                continue  # OpenAPI 3.0 wants at least one name, or no "required" at all
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = "#/components/schemas/" + _component_name(value.removeprefix("#/$defs/"))
            else:
                out[key] = _rewrite_refs(value)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


@lru_cache(maxsize=1)
def record_components() -> dict:
    """``{component name: schema}`` for the record and its parts."""
    try:
        from scopa.record import record_json_schema

        schema = record_json_schema()
    except ImportError:  # pragma: no cover - the engine is part of the project
        logger.warning("engine record schema unavailable; using a loose object")
        return {RECORD_COMPONENT: {"type": "object"}}
    schema = json.loads(json.dumps(schema))
    defs = schema.pop("$defs", {})
    components = {_component_name(name): _rewrite_refs(body) for name, body in defs.items()}
    if RECORD_COMPONENT not in components:
        components[RECORD_COMPONENT] = _rewrite_refs(
            {k: v for k, v in schema.items() if not k.startswith("$")}
        )
    components[RECORD_COMPONENT]["description"] = (
        "A scopa-match/1 record, exactly as docs/record-schema.json publishes it. "
        "The bulk import also accepts a top-level `match` id beside it."
    )
    return components


class RecordSchemaGenerator(SchemaGenerator):
    """The API schema plus the record's components."""

    def get_schema(self, request=None, public=False):
        schema = super().get_schema(request=request, public=public)
        schema.setdefault("components", {}).setdefault("schemas", {}).update(record_components())
        return schema
