#!/usr/bin/env python3
"""Validates a --json output against one definition of sim/output.schema.json, or against
   the schema as a whole (DEF "top": the document must match one of the definitions).
   validate_json.py SCHEMA DEF FILE   (exit 1 with the first error)"""
import json
import sys

import jsonschema

schema_path, definition, path = sys.argv[1:4]
schema = json.load(open(schema_path))
instance = json.load(open(path))
sub = dict(schema)
if definition != "top":
    sub.pop("anyOf", None)
    sub["$ref"] = "#/$defs/" + definition
try:
    jsonschema.Draft202012Validator(sub).validate(instance)
except jsonschema.ValidationError as e:
    print(f"{path} is not a valid '{definition}': {e.message} at {list(e.absolute_path)}")
    sys.exit(1)
