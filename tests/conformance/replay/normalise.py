"""LocalStack's normalisation of Lambda API answers, ported (Apache-2.0; NOTICE beside this file).

The transformer engine itself is LocalStack's published `localstack-snapshot` library (the one
LocalStack's own suite uses: KeyValueBasedTransformer, JsonpathTransformer, RegexTransformer, the
reference numbering `<function-name:1>` and the skip paths); what is ported here is the part of
LocalStack's repository that chooses the transformers, so the local answers are normalised exactly
as the recorded AWS answers were before they were written down:

- `default_transformers`: `tests/aws/conftest.py` lines 114-160 (`snapshot` fixture: account id
  -> 111111111111, region -> <region>, partition, `x-localstack` removed, and for
  `tests/aws/services/lambda_` the legacy SNAPSHOT_BASIC_TRANSFORMER).
- `SNAPSHOT_BASIC_TRANSFORMER`: `localstack-core/localstack/testing/snapshots/transformer_utility.py`
  lines 916-943 (response metadata, uuids in keys ending in "id", ISO 8601 dates, timestamps).
- `TransformerUtility.key_value/jsonpath/regex/remove_key/resource_name/lambda_api`: same file,
  lines 55-163; `_resource_name_transformer` lines 846-874, `_log_stream_name_transformer`
  830-835, `_replace_camel_string_with_hyphen` 824-827, the patterns lines 31-43.
- `module_transformers`: `tests/aws/services/lambda_/test_lambda_api.py` lines 80-83 (its
  autouse `fixture_snapshot`: lambda_api() and CodeSha256).
"""
from __future__ import annotations

import re
from datetime import datetime

from localstack_snapshot.snapshots.transformer import (
    PATTERN_ISO8601,
    GenericTransformer,
    JsonpathTransformer,
    KeyValueBasedTransformer,
    RegexTransformer,
    ResponseMetaDataTransformer,
    SortingTransformer,
)

__all__ = ["TransformerUtility", "default_transformers", "module_transformers", "SortingTransformer"]

PATTERN_UUID = re.compile(r"[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}")
PATTERN_ARN = re.compile(r"arn:(aws[a-zA-Z-]*)?:([a-zA-Z0-9-_.]+)?:([^:]+)?:(\d{12})?:(.*)")
PATTERN_LOGSTREAM_ID = re.compile(r"\d{4}/\d{1,2}/\d{1,2}/\[((\$LATEST)|\d+)\][0-9a-f]{8,32}")


def _replace_camel_string_with_hyphen(input_string: str) -> str:
    return "".join(["-" + c.lower() if c.isupper() else c for c in input_string]).strip("-")


def _log_stream_name_transformer(key: str, val: str):
    if isinstance(val, str) and key in ("log_stream_name", "logStreamName"):
        if re.match(PATTERN_LOGSTREAM_ID, val):
            return val
    return None


def _resource_name_transformer(key: str, val: str):
    if isinstance(val, str):
        match = re.match(PATTERN_ARN, val)
        if match:
            res = match.groups()[-1]
            if res.startswith("<") and res.endswith(">"):
                return None  # already replaced
            if ":changeSet/" in val:
                return val.split(":changeSet/")[-1]
            if "/" in res:
                return res.split("/")[-1]
            if res.startswith("function:"):
                res = res.replace("function:", "")
                if "$" in res:
                    res = res.split("$")[0].rstrip(":")
                return res
            if res.startswith("layer:"):
                parts = res.split(":")
                if len(parts) in (2, 3):
                    return parts[1]
            if ":" in res:
                return res.split(":")[-1]
            return res
    return None


class TransformerUtility:
    """The part of LocalStack's TransformerUtility the Lambda API tests call."""

    @staticmethod
    def key_value(key: str, value_replacement: str | None = None, reference_replacement: bool = True):
        return KeyValueBasedTransformer(
            lambda k, v: v if k == key and (v is not None and v != "") else None,
            replacement=value_replacement or _replace_camel_string_with_hyphen(key),
            replace_reference=reference_replacement)

    @staticmethod
    def resource_name(replacement_name: str = "resource"):
        return KeyValueBasedTransformer(_resource_name_transformer, replacement_name)

    @staticmethod
    def jsonpath(jsonpath: str, value_replacement: str, reference_replacement: bool = True):
        return JsonpathTransformer(jsonpath=jsonpath, replacement=value_replacement,
                                   replace_reference=reference_replacement)

    @staticmethod
    def regex(regex, replacement: str):
        return RegexTransformer(regex, replacement)

    @staticmethod
    def remove_key(key: str):
        def _remove(data):
            if isinstance(data, dict):
                return {k: _remove(v) for k, v in data.items() if k != key}
            if isinstance(data, list):
                return [_remove(i) for i in data]
            return data
        return GenericTransformer(lambda content, *_: {k: _remove(v) for k, v in content.items()})

    @staticmethod
    def lambda_api():
        return [
            TransformerUtility.key_value("FunctionName"),
            TransformerUtility.key_value("CodeSize", value_replacement="<code-size>", reference_replacement=False),
            TransformerUtility.jsonpath(jsonpath="$..Code.Location", value_replacement="<location>",
                                        reference_replacement=False),
            TransformerUtility.jsonpath(jsonpath="$..Content.Location", value_replacement="<layer-location>",
                                        reference_replacement=False),
            KeyValueBasedTransformer(_resource_name_transformer, "resource"),
            KeyValueBasedTransformer(_log_stream_name_transformer, "log-stream-name", replace_reference=True),
        ]


SNAPSHOT_BASIC_TRANSFORMER = [
    ResponseMetaDataTransformer(),
    KeyValueBasedTransformer(
        lambda k, v: v if (isinstance(v, str) and k.lower().endswith("id") and re.match(PATTERN_UUID, v)) else None,
        "uuid"),
    RegexTransformer(PATTERN_ISO8601, "date"),
    KeyValueBasedTransformer(lambda k, v: v if isinstance(v, datetime) else None, "datetime",
                             replace_reference=False),
    KeyValueBasedTransformer(
        lambda k, v: (str(v) if (re.compile(r"^.*timestamp.*$", flags=re.IGNORECASE).match(k)
                                 or k in ("creationTime", "ingestionTime"))
                      and not PATTERN_ISO8601.match(str(v)) else None),
        "timestamp", replace_reference=False),
]


def default_transformers(account_id: str, region_name: str) -> list[tuple]:
    """(transformer, priority) as LocalStack's `snapshot` fixture adds them for tests/aws/services/lambda_."""
    out = [(RegexTransformer(account_id, "1" * 12), 2),
           (RegexTransformer(region_name, "<region>"), 2),
           (RegexTransformer("arn:aws:", "arn:<partition>:"), 2),
           (TransformerUtility.remove_key("x-localstack"), 0)]
    return out + [(t, 2) for t in SNAPSHOT_BASIC_TRANSFORMER]


def module_transformers() -> list:
    """test_lambda_api.py's autouse fixture_snapshot."""
    return TransformerUtility.lambda_api() + [TransformerUtility.key_value("CodeSha256")]
