# Sourced by scripts/setup.sh and scripts/interpreters.sh.

# can_install_debian_packages: whether this is Debian and we are root (apt-get can install).
can_install_debian_packages() {
  command -v dpkg >/dev/null && [ "$(id -u)" = 0 ]
}

# install_missing PACKAGE...: apt-get installs those of the packages not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
