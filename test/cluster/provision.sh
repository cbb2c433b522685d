#!/usr/bin/env bash
# Provides kube-apiserver and etcd for the real-cluster suite (test/cluster/).
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS (envtest binaries: kube-apiserver and etcd in one folder);
#   2. binaries already built into the cache folder by an earlier run;
#   3. on Debian: etcd from the etcd-server package, kube-apiserver built from Debian's own
#      `kubernetes` source package (upstream 1.20.2 with its vendor/ tree) with Go 1.19.
#
# The result is written to "$cache/env" (KUBE_APISERVER_BIN=, ETCD_BIN=, or KUBE_UNAVAILABLE_REASON=),
# which test/cluster/binaries.ts reads. The script always exits 0 so the rest of the suite runs; when
# it cannot provide the binaries the env file says why and the suite reports it.
#
# Environment:
#   VENDOR_KUBE_CACHE        cache folder (default /var/cache/vendor-agent/kube as root,
#                            otherwise ${XDG_CACHE_HOME:-$HOME/.cache}/vendor-agent/kube)
#   KUBEBUILDER_ASSETS       folder holding kube-apiserver and etcd
#   VENDOR_KUBE_KEEP_BUILD=1 keep the Kubernetes source and build output (about 1.5 GB) after a build
set -uo pipefail

if [[ -n "${VENDOR_KUBE_CACHE:-}" ]]; then
  cache="$VENDOR_KUBE_CACHE"
elif [[ "$(id -u)" == 0 ]]; then
  cache=/var/cache/vendor-agent/kube
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/vendor-agent/kube"
fi
env_file="$cache/env"
kube_version=1.20.2
go_root=/usr/lib/go-1.19
# Names what the cached binary was built from; a cache made by another recipe is rebuilt.
recipe="kube-apiserver v$kube_version, Go 1.19, reflect2 1.0.2 from Debian"
reflect2_src=/usr/share/gocode/src/github.com/modern-go/reflect2
packages=(etcd-server golang-1.19-go golang-github-modern-go-reflect2-dev rsync jq)

log() { printf 'provision: %s\n' "$*" >&2; }

write_env() { # KEY=VALUE lines; written atomically so a reader never sees half a file
  local tmp="$env_file.tmp.$$"
  printf '%s\n' "$@" >"$tmp" && mv -f "$tmp" "$env_file"
}

unavailable() {
  log "real-cluster suite unavailable: $1"
  write_env "KUBE_UNAVAILABLE_REASON=$1"
  exit 0
}

executable() { [[ -f "$1" && -x "$1" ]]; }

if ! mkdir -p "$cache" 2>/dev/null || ! [[ -w "$cache" ]]; then
  log "real-cluster suite unavailable: cache folder $cache is not writable (set VENDOR_KUBE_CACHE)"
  exit 0
fi

# One provisioning at a time per cache folder: a second run waits and then reuses the first's result.
exec 9>"$cache/.lock"
if command -v flock >/dev/null; then flock 9; fi

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if executable "$KUBEBUILDER_ASSETS/kube-apiserver" && executable "$KUBEBUILDER_ASSETS/etcd"; then
    log "using binaries from KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    write_env "KUBE_APISERVER_BIN=$KUBEBUILDER_ASSETS/kube-apiserver" "ETCD_BIN=$KUBEBUILDER_ASSETS/etcd" \
      "KUBE_SOURCE=KUBEBUILDER_ASSETS"
    exit 0
  fi
  unavailable "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS does not hold executable kube-apiserver and etcd"
fi

apiserver="$cache/bin/kube-apiserver"
etcd_bin="$(command -v etcd || true)"
if executable "$apiserver" && [[ -n "$etcd_bin" && "$(cat "$cache/bin/recipe" 2>/dev/null)" == "$recipe" ]]; then
  log "reusing $apiserver and $etcd_bin"
  write_env "KUBE_APISERVER_BIN=$apiserver" "ETCD_BIN=$etcd_bin" "KUBE_SOURCE=cache"
  exit 0
fi

if ! [[ -r /etc/debian_version ]] || ! command -v apt-get >/dev/null; then
  unavailable "no KUBEBUILDER_ASSETS and not a Debian system, so kube-apiserver cannot be built here"
fi
if [[ "$(id -u)" != 0 ]]; then
  unavailable "no KUBEBUILDER_ASSETS, and building on Debian needs root to install etcd-server and golang-1.19-go"
fi

started=$SECONDS
log "installing ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${packages[@]}" >"$cache/apt-install.log" 2>&1; then
  apt-get update >"$cache/apt-update.log" 2>&1 || true
  apt-get install -y --no-install-recommends "${packages[@]}" >"$cache/apt-install.log" 2>&1 ||
    unavailable "apt-get install ${packages[*]} failed (see $cache/apt-install.log)"
fi
etcd_bin="$(command -v etcd || true)"
[[ -n "$etcd_bin" ]] || unavailable "etcd-server is installed but no etcd is on PATH"
executable "$go_root/bin/go" || unavailable "golang-1.19-go is installed but $go_root/bin/go is missing"
[[ -f "$reflect2_src/unsafe_map.go" ]] || unavailable "golang-github-modern-go-reflect2-dev is installed but $reflect2_src is missing"

# A private apt configuration with one deb-src line for the mirror the system already uses, so the
# system's own sources stay untouched.
mirror_of_system() {
  local uri
  uri="$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1)"
  [[ -n "$uri" ]] || uri="$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
    grep -v security | grep -oE '(https?|file)://[^ ]+' | head -n1)"
  printf '%s' "${uri:-http://deb.debian.org/debian}"
}
suite="$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-bookworm}")"
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/sources.list.d"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed_by=""
[[ -r "$keyring" ]] && signed_by="[signed-by=$keyring] "
printf 'deb-src %s%s %s main\n' "$signed_by" "$(mirror_of_system)" "$suite" >"$apt_dir/sources.list"
apt_private=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
  -o "Dir::State::Lists=$apt_dir/lists")

build="$cache/build"
src="$build/kubernetes-$kube_version"
if ! [[ -f "$src/Makefile" ]]; then
  log "downloading the kubernetes source package with $(cat "$apt_dir/sources.list")"
  rm -rf "$build" && mkdir -p "$build/download"
  apt-get "${apt_private[@]}" update >"$cache/apt-source.log" 2>&1 ||
    unavailable "apt-get update of the private deb-src list failed (see $cache/apt-source.log)"
  (cd "$build/download" && apt-get "${apt_private[@]}" source --download-only kubernetes) >>"$cache/apt-source.log" 2>&1 ||
    unavailable "apt-get source --download-only kubernetes failed (see $cache/apt-source.log)"
  orig="$(ls "$build"/download/kubernetes_*.orig.tar.* 2>/dev/null | head -n1)"
  [[ -n "$orig" ]] || unavailable "the kubernetes source package has no upstream tarball"
  # The upstream tarball alone: Debian's patches touch only kubectl's printing. Unpacked aside and
  # moved into place, so an interrupted run never leaves a half tree that looks complete.
  mkdir -p "$build/unpack" && tar -xf "$orig" -C "$build/unpack" || unavailable "could not unpack $orig"
  [[ -f "$build/unpack/kubernetes-$kube_version/Makefile" ]] ||
    unavailable "the kubernetes source package is not upstream $kube_version"
  mv "$build/unpack/kubernetes-$kube_version" "$src" && rm -rf "$build/unpack" "$build/download"
fi

# Kubernetes 1.20 vendors reflect2 1.0.1, whose map support crashes under Go 1.18 and later (every
# request with a map in its body panics); 1.0.2 is the same API made to work there.
rsync -a --delete --exclude=BUILD "$reflect2_src/" "$src/vendor/github.com/modern-go/reflect2/" ||
  unavailable "could not put reflect2 1.0.2 into the kubernetes vendor tree"

log "building kube-apiserver $kube_version (5 minutes on 2 idle cores, up to 15 when they are busy; log in $cache/build.log)"
# Kubernetes 1.20 builds in GOPATH mode from its own vendor/ tree; the KUBE_GIT_* variables stand in
# for the git checkout the version stamping expects.
if ! (
  cd "$src" &&
    env PATH="$go_root/bin:$PATH" GOROOT="$go_root" CGO_ENABLED=0 GOPROXY=off GOFLAGS= GO111MODULE=off \
      GOCACHE="$build/gocache" GOPATH="$build/gopath" \
      KUBE_GIT_VERSION="v$kube_version" KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20 KUBE_GIT_TREE_STATE=clean \
      KUBE_GIT_COMMIT=0000000000000000000000000000000000000000 \
      make WHAT=cmd/kube-apiserver
) >"$cache/build.log" 2>&1; then
  unavailable "building kube-apiserver failed (see the end of $cache/build.log)"
fi
built="$(find "$src/_output/local/bin" -type f -name kube-apiserver 2>/dev/null | head -n1)"
executable "$built" || unavailable "the build finished without a kube-apiserver binary"
mkdir -p "$cache/bin" && cp "$built" "$apiserver.tmp" && mv -f "$apiserver.tmp" "$apiserver" &&
  printf '%s\n' "$recipe" >"$cache/bin/recipe"
[[ "${VENDOR_KUBE_KEEP_BUILD:-}" == 1 ]] || rm -rf "$build"
log "kube-apiserver built in $((SECONDS - started)) s: $apiserver"
write_env "KUBE_APISERVER_BIN=$apiserver" "ETCD_BIN=$etcd_bin" "KUBE_SOURCE=debian-build"
exit 0
