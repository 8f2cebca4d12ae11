"""The python3.* managed runtime: AWS's runtime interface client (awslambdaric) on the handler in
$_HANDLER, with sys.path as Lambda's Python runtimes order it: the package (/var/task), then a
layer's /opt/python/lib/pythonX.Y/site-packages and /opt/python, then the runtime (/var/runtime,
from $PYTHONPATH). Where the machine's interpreter is not the minor version the function asked
for ($AWS_EXECUTION_ENV), the first line of the function's log says so."""
import os
import sys


def _requested_version() -> str:
    env = os.environ.get("AWS_EXECUTION_ENV", "")  # AWS_Lambda_python3.12
    return env.rpartition("python")[2]


def main() -> None:
    want = _requested_version()
    have = "%d.%d" % sys.version_info[:2]
    if want and want != have:
        # The same sentence as the function's StateReason (agent/platform/runtimes.go: RuntimeNote).
        print(f"The local platform runs python{want} under Python {have} ({sys.executable}), not Python {want}: "
              "this machine has no other.", file=sys.stderr, flush=True)
    task = os.environ.get("LAMBDA_TASK_ROOT", "/var/task")
    opt = os.environ.get("FAASCOPE_OPT_DIR", "/opt")  # where layers are without isolation
    front = [task, f"{opt}/python/lib/python{want or have}/site-packages", f"{opt}/python"]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = front + [here] + [p for p in sys.path if p not in front and p != here]
    from awslambdaric.__main__ import main as ric_main

    ric_main([sys.argv[0], os.environ["_HANDLER"]])


if __name__ == "__main__":
    main()
