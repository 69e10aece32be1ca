#!/usr/bin/env bash
# Installs timeoutlint for the repository's GitHub Action (action.yml), in two phases so the
# action can restore a cached build between them:
#
#   install.sh download   the prebuilt binary of a release for this runner, checked against its
#                         .sha256; prints `installed=true|false` and `rev=...` (the git revision
#                         a fallback build would use) to $GITHUB_OUTPUT
#   install.sh build      `cargo install --git` at that revision, for runners or versions with no
#                         prebuilt binary (before the first release, an unknown target)
#
# Both install into $TIMEOUTLINT_ROOT/bin and add it to $GITHUB_PATH. Inputs are environment
# variables so the script can be tested off GitHub: TIMEOUTLINT_VERSION (`latest` or a release
# tag such as `v0.1.0`), TIMEOUTLINT_REPO (owner/name), TIMEOUTLINT_REF (the ref the action was
# used at, for the fallback build when the version is `latest`), TIMEOUTLINT_ROOT, and
# TIMEOUTLINT_DOWNLOAD_BASE / TIMEOUTLINT_GIT_URL to point away from github.com.
set -euo pipefail

repo="${TIMEOUTLINT_REPO:-timeoutlint/timeoutlint}"
version="${TIMEOUTLINT_VERSION:-latest}"
root="${TIMEOUTLINT_ROOT:-${RUNNER_TEMP:-/tmp}/timeoutlint}"
base="${TIMEOUTLINT_DOWNLOAD_BASE:-https://github.com/$repo/releases}"
git_url="${TIMEOUTLINT_GIT_URL:-https://github.com/$repo}"
output="${GITHUB_OUTPUT:-/dev/null}"

# The release tag: `0.1.0` and `v0.1.0` are the same release.
tag=""
if [ "$version" != "latest" ]; then
  tag="v${version#v}"
fi

# The release asset for this runner; Linux gets the static musl build, which runs anywhere.
target=""
case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  Windows/X64) target=x86_64-pc-windows-msvc ;;
esac

exe=""
case "${RUNNER_OS:-}" in Windows) exe=.exe ;; esac

bin="$root/bin"

on_path() {
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$bin" >>"$GITHUB_PATH"
  fi
  "$bin/timeoutlint$exe" --version
}

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# The revision a build from source uses: the release tag, else the commit the action ref names
# (a branch is resolved to its commit so the cache key changes when the branch moves).
fallback_rev() {
  local ref="${TIMEOUTLINT_REF:-}"
  if [ -n "$tag" ]; then
    echo "$tag"
  elif [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    echo "$ref"
  else
    local sha
    sha="$(git ls-remote "$git_url" "${ref:-HEAD}" 2>/dev/null | head -n1 | cut -f1)"
    echo "${sha:-${ref:-HEAD}}"
  fi
}

download() {
  local rev
  rev="$(fallback_rev)"
  echo "rev=$rev" >>"$output"
  if [ -z "$target" ]; then
    echo "::notice::timeoutlint has no prebuilt binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}; building it from source"
    echo "installed=false" >>"$output"
    return
  fi
  local archive="timeoutlint-$target.tar.gz"
  if [ -n "$exe" ]; then archive="timeoutlint-$target.zip"; fi
  local url="$base/latest/download/$archive"
  if [ -n "$tag" ]; then url="$base/download/$tag/$archive"; fi
  local tmp
  tmp="$(mktemp -d)"
  if ! curl -fsSL --retry 3 -o "$tmp/$archive" "$url" \
    || ! curl -fsSL --retry 3 -o "$tmp/$archive.sha256" "$url.sha256"; then
    echo "::notice::no prebuilt timeoutlint at $url (no release yet?); building it from $git_url at $rev"
    echo "installed=false" >>"$output"
    return
  fi
  local want got
  want="$(cut -d' ' -f1 <"$tmp/$archive.sha256")"
  got="$(sha256 "$tmp/$archive")"
  if [ "$want" != "$got" ]; then
    echo "::error::checksum mismatch for $url: expected $want, got $got"
    exit 1
  fi
  mkdir -p "$bin"
  if [ -n "$exe" ]; then
    unzip -o -j -q "$tmp/$archive" "*/timeoutlint.exe" "*/cargo-timeoutlint.exe" -d "$bin"
  else
    tar -xzf "$tmp/$archive" -C "$bin" --strip-components=1 \
      "timeoutlint-$target/timeoutlint" "timeoutlint-$target/cargo-timeoutlint"
  fi
  rm -rf "$tmp"
  echo "installed=true" >>"$output"
  on_path
}

build() {
  local rev="${TIMEOUTLINT_REV:-$(fallback_rev)}"
  if [ ! -x "$bin/timeoutlint$exe" ]; then
    # `${how[@]+..}` below: an empty array is "unbound" to the bash 3.2 that macOS ships.
    local how=(--rev "$rev")
    if [ "$rev" = "HEAD" ]; then
      how=()
    elif [[ "$rev" =~ ^v[0-9] ]]; then
      how=(--tag "$rev")
    elif ! [[ "$rev" =~ ^[0-9a-f]{40}$ ]]; then
      how=(--branch "$rev")
    fi
    cargo install --locked --git "$git_url" ${how[@]+"${how[@]}"} --root "$root" timeoutlint
  fi
  on_path
}

case "${1:-}" in
  download) download ;;
  build) build ;;
  *)
    echo "usage: install.sh download|build" >&2
    exit 2
    ;;
esac
