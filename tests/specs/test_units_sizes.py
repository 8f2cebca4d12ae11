import pytest
from hypothesis import given
from hypothesis import strategies as st

from faascope.units import (SizeError, format_duration, format_size, memory_mb_to_bytes, parse_duration,
                            parse_memory_mb, parse_size)


@pytest.mark.parametrize("text,expected", [
    ("512B", 512), ("512", 512), (512, 512), ("0B", 0),
    ("10KB", 10_000), ("10kB", 10_000), ("10kb", 10_000), ("128KB", 128_000),
    ("128KiB", 131_072), ("128kib", 131_072), ("1MB", 1_000_000), ("1MiB", 1_048_576),
    ("1GB", 1_000_000_000), ("1GiB", 1_073_741_824), ("1TB", 10**12), ("1TiB", 2**40),
    ("1.5KiB", 1536), ("0.5MB", 500_000), ("1024000KB", 1_024_000_000), (" 4 KiB ", 4096),
    (4096.0, 4096),
])
def test_exact_binary_and_decimal_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text,needle", [
    ("128k", "ambiguous"), ("1M", "ambiguous"), ("1G", "ambiguous"), ("2Ki", "ambiguous"),
    ("1.5B", "whole number"), ("1.0001KB", "whole number"), ("10 parsecs", "unit"),
    ("ten KB", "cannot read"), (-1, "negative"), (True, "boolean"), ([1], "expected a size"),
    ("", "cannot read"),
])
def test_bad_sizes_say_what_to_write(text, needle):
    with pytest.raises(SizeError, match=needle):
        parse_size(text)


@given(st.integers(min_value=0, max_value=2**50))
def test_format_size_round_trips(n):
    assert parse_size(format_size(n)) == n


def test_format_prefers_the_unit_that_was_probably_meant():
    assert format_size(128_000) == "128KB"
    assert format_size(131_072) == "128KiB"
    assert format_size(1_024_000_000) == "1024MB"
    assert format_size(2**30) == "1GiB"
    assert format_size(513) == "513B"


def test_lambda_memory_mb_is_mib():
    assert memory_mb_to_bytes(128) == 134_217_728
    assert parse_memory_mb(128) == 128
    assert parse_memory_mb("2048") == 2048
    assert parse_memory_mb("2GiB") == 2048
    assert parse_memory_mb("128MiB") == 128
    with pytest.raises(SizeError, match="ambiguous"):
        parse_memory_mb("128MB")
    with pytest.raises(SizeError, match="whole number of MiB"):
        parse_memory_mb("1000KiB")


@pytest.mark.parametrize("text,seconds", [(30, 30.0), ("30s", 30.0), ("15m", 900.0),
                                          ("1h", 3600.0), ("1d", 86400.0), ("500ms", 0.5),
                                          ("2.5min", 150.0)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_bad_duration():
    with pytest.raises(ValueError, match="duration"):
        parse_duration("soon")


@pytest.mark.parametrize("seconds,text", [
    (0.000000861, "0.861 µs"), (0.000861, "861 µs"), (0.000999, "999 µs"), (0.001, "1 ms"),
    (0.0314, "31.4 ms"), (0.9994, "999 ms"), (1.0, "1 s"), (2.5, "2.5 s"), (125.0, "125 s"),
    (1500.0, "1500 s"), (86400.0, "86400 s"),
])
def test_format_duration_scales_to_the_unit_that_suits(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_gives_the_half_width_in_the_same_unit():
    assert format_duration(3.64e-5, 2.1e-6) == "36.4 µs ± 2.1"
    assert format_duration(1.25, 0.031) == "1.25 s ± 0.031"
    assert format_duration(float("nan")) == "–"
