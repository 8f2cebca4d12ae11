"""faascope: designed, statistically defensible I/O experiments on serverless platforms."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("faascope")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"
