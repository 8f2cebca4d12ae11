#!/usr/bin/env bash
# Install faascope and what it uses on a fresh Debian-like machine: Go and Python must be there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "faascope needs Go (https://go.dev/dl) to build its agent and platform" >&2; exit 1; }

# Debian packages, each for a reason:
#   e2fsprogs     mkfs.ext4, for the lambda profile's disk-backed /tmp
#   fio           the reference the I/O engine is benchmarked against
#   redis-server  the local stand-in for key-value storage
#   chromium      renders the HTML report in tests
#   cmake g++ make autoconf automake libtool
#                 build the native addon of aws-lambda-ric (the nodejs*.x managed runtime, below):
#                 its install compiles the libcurl and aws-lambda-cpp it bundles
want=(e2fsprogs fio redis-server chromium cmake g++ make autoconf automake libtool)
. scripts/debian_packages.sh
if can_install_debian_packages; then
  install_missing "${want[@]}"
else
  echo "note: not root or not Debian: install ${want[*]} yourself; without root the local platform runs functions without limits" >&2
fi

# The shared file system (the EFS stand-in) is served by the platform through FUSE, mounted
# directly as root: it needs the kernel's fuse module (/dev/fuse), no user-space package.
if [ "$(id -u)" = 0 ] && [ ! -e /dev/fuse ]; then
  modprobe fuse 2>/dev/null || echo "note: no /dev/fuse (modprobe fuse failed): the calibrated shared file system cannot start" >&2
fi

# The local platform's managed runtimes (docs/platform.md, "Managed runtimes"): AWS's own runtime
# interface clients, installed beside each family's committed bootstrap in the git-ignored
# src/faascope/_runtimes/<family>/, which the platform mounts read-only at /var/runtime.
# python3.*: awslambdaric from PyPI, pinned (a new release changes what every Python function
# runs on), built for the sandbox's interpreter (/usr/bin/python3, the machine's own; the
# runtime table's in agent/platform/runtimes.go): its ABI, not pip's.
AWSLAMBDARIC_VERSION=4.2.2
rt=src/faascope/_runtimes
if [ -x /usr/bin/python3 ] && ! grep -qx "awslambdaric==$AWSLAMBDARIC_VERSION" "$rt/python/.installed" 2>/dev/null; then
  pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  python3 -m pip install -q --disable-pip-version-check --no-compile --upgrade --target "$rt/python" \
    --python-version "$pyver" --implementation cp --only-binary=:all: "awslambdaric==$AWSLAMBDARIC_VERSION"
  /usr/bin/python3 -S -c "import sys; sys.path.insert(0, '$rt/python'); import awslambdaric.bootstrap"
  echo "awslambdaric==$AWSLAMBDARIC_VERSION" > "$rt/python/.installed"
fi
# The client's bytecode, as pip installs it by default and a runtime ships it: the sandbox mounts
# /var/runtime read-only, so without it CPython compiled the client's source at every cold start
# (python3.12's Init Duration 132 -> 94 ms here; lambda-perf's is 83.7). One tag per interpreter
# (cpython-311 here, scripts/interpreters.sh adds its own), so they sit side by side.
if [ -x /usr/bin/python3 ]; then /usr/bin/python3 -m compileall -q "$rt/python" >/dev/null; fi
# nodejs*.x: aws-lambda-ric from npm, pinned likewise, for the machine's Node (/usr/bin/node):
# 4.x needs Node 22 or later, 3.3.0 runs on Node 18 and 20. Its install builds a native addon
# (libcurl and aws-lambda-cpp from source): about a minute and a half on two cores, once.
if [ -x /usr/bin/node ] && command -v npm >/dev/null; then
  node_major=$(/usr/bin/node -p 'process.versions.node.split(".")[0]')
  if [ "$node_major" -ge 22 ]; then ric=aws-lambda-ric@4.0.2; else ric=aws-lambda-ric@3.3.0; fi
  if ! grep -qx "$ric" "$rt/nodejs/.installed" 2>/dev/null; then
    echo "building $ric (native addon) for Node $node_major"
    t0=$(date +%s)
    npm install --silent --no-audit --no-fund --no-save --prefix "$rt/nodejs" "$ric"
    echo "$ric" > "$rt/nodejs/.installed"
    echo "$ric built in $(( $(date +%s) - t0 )) s"
  fi
else
  echo "note: no /usr/bin/node or npm: the local platform offers no nodejs*.x runtime" >&2
fi
# The exact interpreter of each pinned runtime (scripts/interpreters.txt: CPythons, Node.js), so
# that it runs on its own version, not the machine's with a note. A CPython takes minutes to build,
# so only when asked (FAASCOPE_INTERPRETERS=1; scripts/test.sh asks, since the tests hold the
# platform to it). After both clients above: it adds the Python client's native parts for each
# CPython and checks that the Node client loads in each Node.
if [ "${FAASCOPE_INTERPRETERS:-0}" = 1 ]; then
  bash scripts/interpreters.sh
fi

# Installs the faascope command; the package's build hook compiles the Go binaries.
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
# The S3-compatible stand-in (VersityGW) is built from source with `go install` once and cached
# under faascope's data directory: a few minutes the first time, nothing afterwards.
python3 -c "from faascope.standins import versitygw_binary; print('S3 stand-in:', versitygw_binary())"
echo "faascope $(faascope --version | awk '{print $NF}') installed"
