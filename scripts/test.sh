#!/usr/bin/env bash
# The whole test suite: Go (agent and platform) and Python (everything else).
set -euo pipefail
cd "$(dirname "$0")/.."
# With the exact interpreters (scripts/interpreters.sh): tests hold python3.12 to CPython 3.12.
FAASCOPE_INTERPRETERS=1 bash scripts/setup.sh
export PATH="$PATH:/usr/local/go/bin"
(cd agent && go vet ./... && go test -count=1 ./...)
python3 -m pytest -q "$@"
