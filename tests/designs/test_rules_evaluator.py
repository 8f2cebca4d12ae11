import pytest

from faascope.specs.rules import Rule, RuleError

ENV = {"io_size": 512, "file_size": 10_000, "memory": 128 * 2**20, "memory_mb": 128,
       "profile": "gcf", "op": "read", "direct": True}


@pytest.mark.parametrize("text,expected", [
    ("io_size <= file_size", True),
    ("file_size < memory", True),
    ("profile != 'gcf' or file_size < memory", True),
    ("profile == \"lambda\"", False),
    ("not direct", False),
    ("direct and op == 'read'", True),
    ("profile in ('lambda', 'gcf')", True),
    ("profile not in ['lambda']", True),
    ("file_size < 10KiB", True),
    ("file_size <= 10KB", True),
    ("file_size < 10KB", False),
    ("memory >= 128MiB", True),
    ("memory_mb * 2 == 256", True),
    ("file_size // io_size == 19", True),
    ("512 <= io_size <= 1KiB", True),
    ("-io_size < 0", True),
    ("direct == true", True),
    ("'1GB' != profile", True),  # a size inside a string stays a string
])
def test_rules_evaluate(text, expected):
    assert Rule.parse(text).evaluate(ENV) is expected


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",
    "open('/etc/passwd')",
    "io_size.__class__",
    "ENV['x']",
    "[x for x in (1, 2)]",
    "lambda: 1",
    "2 ** 100000000",
    "io_size if direct else file_size",
    "(x := 3)",
    "f'{io_size}'",
    "io_size; file_size",
    "",
    "a" * 2000,
])
def test_only_whitelisted_syntax(text):
    with pytest.raises(RuleError):
        Rule.parse(text)


def test_names_are_collected():
    assert Rule.parse("io_size <= file_size and profile == 'gcf'").names == {
        "io_size", "file_size", "profile"}


@pytest.mark.parametrize("text,needle", [
    ("profile < 3", "order-compare"),
    ("io_size + profile > 1", "arithmetic"),
    ("io_size", "not to true or false"),
    ("io_size and direct", "not true or false"),
    ("unknown_name == 1", "unknown name"),
    ("io_size / 0 > 1", "division by zero"),
])
def test_evaluation_errors_are_explained(text, needle):
    with pytest.raises(RuleError, match=needle):
        Rule.parse(text).evaluate(ENV)


def test_string_multiplication_bomb_is_refused():
    with pytest.raises(RuleError):
        Rule.parse("'a' * 10000000000 == profile").evaluate(ENV)
