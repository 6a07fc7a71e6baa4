#!/usr/bin/env bash
# Installs the real peers the conformance suite runs against, idempotently:
#   - Debian packages: docker-registry (distribution 2.8.x), apache2-utils
#     (htpasswd), skopeo, util-linux (unshare), ca-certificates;
#   - the real kubelet credential provider, ecr-credential-provider, built
#     from the Go module k8s.io/cloud-provider-aws at ECR_PROVIDER_VERSION
#     and cached by version outside the repository.
# A second run finds everything in place and returns in about a second.
# It prints the path of the provider binary on its last line.
set -euo pipefail

ECR_PROVIDER_MODULE=k8s.io/cloud-provider-aws
ECR_PROVIDER_VERSION="${ECR_PROVIDER_VERSION:-v1.37.1}"
# Kept outside the repository (never a directory named bin inside it).
CACHE_DIR="${HYPERSHIFT_ECR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hypershift-ecr}/conformance"
GO="${GO:-go}"

log() { echo "conformance setup: $*" >&2; }

# --- Debian packages -------------------------------------------------------
# command -> package providing it
declare -A want=(
  [docker-registry]=docker-registry
  [htpasswd]=apache2-utils
  [skopeo]=skopeo
  [unshare]=util-linux
)
missing=()
for cmd in "${!want[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing packages ${missing[*]} and not root: install them with apt-get"
    exit 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No service is started: the suite runs its own registry on loopback.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- ecr-credential-provider -----------------------------------------------
dest="$CACHE_DIR/ecr-credential-provider/$ECR_PROVIDER_VERSION"
binary="$dest/ecr-credential-provider"
if [ ! -x "$binary" ]; then
  log "building ecr-credential-provider $ECR_PROVIDER_MODULE@$ECR_PROVIDER_VERSION"
  # `go install module@version` refuses a module whose go.mod has replace
  # directives (this one replaces github.com/google/cel-go), so build it in
  # place from a writable copy of the downloaded module, with its own go.mod.
  # Downloaded from outside any module, so that the caller's go.mod and
  # go.sum are never touched.
  mkdir -p "$dest"
  dir="$(cd "$dest" && GOWORK=off GOFLAGS='' "$GO" mod download -json "$ECR_PROVIDER_MODULE@$ECR_PROVIDER_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    log "go mod download $ECR_PROVIDER_MODULE@$ECR_PROVIDER_VERSION gave no directory"
    exit 1
  fi
  src="$dest/src"
  rm -rf "$src"
  cp -r "$dir" "$src" && chmod -R u+w "$src"
  # Outside the main module: GOFLAGS of the caller (e.g. -mod=vendor) must
  # not apply, nor a go.work above the cache directory.
  (cd "$src" && GOFLAGS="-mod=mod -buildvcs=false" GOWORK=off CGO_ENABLED=0 \
    "$GO" build -trimpath -o "$binary.tmp" \
      -ldflags "-s -w -X main.gitVersion=$ECR_PROVIDER_VERSION" \
      ./cmd/ecr-credential-provider)
  mv "$binary.tmp" "$binary"
  rm -rf "$src"
fi
echo "$binary"
