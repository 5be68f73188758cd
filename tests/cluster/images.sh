#!/usr/bin/env bash
# Builds the container images with buildah, without a Docker engine or a registry, and exports them as
# docker-archive tars that `ctr images import` and `kind load image-archive` accept:
#
#   tests/cluster/images.sh [check|main|all]   (default all)
#     -> build/images/gpu-scheduler-check.tar   gpu-scheduler-check:latest
#     -> build/images/gpu-scheduler.tar         gpu-scheduler:latest
#
# The Containerfiles say `FROM debian:bookworm-slim`. With no registry reachable, that base is made here
# with debootstrap (minbase, trimmed like Debian's slim image), cached outside the repository and tagged
# in buildah's storage under the names a short-name lookup tries, so the Containerfiles build unchanged.
#
# After each build the image is checked: its config says user 65532:65532, and its entrypoint binary
# runs as that user on a read-only view of the image (chroot), printing its version or one report line.
#
# Environment:
#   GS_IMAGE_CACHE   cache root (default /var/cache/gpu-scheduler): base rootfs tar, buildah storage
#   GS_BASE_SUITE    Debian suite of the base (default bookworm)
#   GS_BASE_MAX_AGE  days before the base is bootstrapped again (default 7; 0 forces a rebuild)
#   DEBIAN_MIRROR    default http://deb.debian.org/debian
#   GS_IMAGES_OUT    output directory (default build/images)
#   BUILDAH_ISOLATION  chroot when no OCI runtime (runc/crun) is installed, else buildah's default
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
WHAT=${1:-all}
case $WHAT in check|main|all) ;; *) echo "usage: $0 [check|main|all]" >&2; exit 2 ;; esac

CACHE=${GS_IMAGE_CACHE:-/var/cache/gpu-scheduler}
SUITE=${GS_BASE_SUITE:-bookworm}
MAX_AGE=${GS_BASE_MAX_AGE:-7}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
OUT=${GS_IMAGES_OUT:-$ROOT/build/images}
BASE_DIR="$CACHE/base-$SUITE"
BASE_TAR="$BASE_DIR/rootfs.tar"
BASE_REF="localhost/debian:$SUITE-slim"
VERSION=$(git describe --always --dirty 2>/dev/null || echo 0.1.0)

log() { printf 'images: %s\n' "$*" >&2; }
die() { printf 'images: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, buildah's overlay storage, chroot)"

need=()
command -v buildah >/dev/null || need+=(buildah)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# Own storage, away from any system-wide containers storage. Kernel overlayfs works on ext4/xfs.
mkdir -p "$CACHE/containers"
export CONTAINERS_STORAGE_CONF="$CACHE/containers/storage.conf"
cat > "$CONTAINERS_STORAGE_CONF.tmp" <<EOF
[storage]
driver = "overlay"
runroot = "$CACHE/containers/run"
graphroot = "$CACHE/containers/storage"
EOF
mv "$CONTAINERS_STORAGE_CONF.tmp" "$CONTAINERS_STORAGE_CONF"
if [ -z "${BUILDAH_ISOLATION:-}" ] && ! command -v runc >/dev/null && ! command -v crun >/dev/null; then
	export BUILDAH_ISOLATION=chroot
fi

# --- the base image -------------------------------------------------------------------------------

# Trims a minbase tree the way Debian's official slim images are made (debuerreotype's slimify): no
# docs, man pages or locales now or in later apt installs, no apt lists or caches, no logs.
slim_rootfs() {
	local d=$1
	mkdir -p "$d/etc/dpkg/dpkg.cfg.d" "$d/etc/apt/apt.conf.d"
	cat > "$d/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
	cat > "$d/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
	printf 'Acquire::Languages "none";\n' > "$d/etc/apt/apt.conf.d/docker-no-languages"
	printf 'Acquire::GzipIndexes "true";\n' > "$d/etc/apt/apt.conf.d/docker-gzip-indexes"
	printf 'Apt::AutoRemove::SuggestsImportant "false";\n' > "$d/etc/apt/apt.conf.d/docker-autoremove-suggests"
	# Services must not start inside image builds.
	printf '#!/bin/sh\nexit 101\n' > "$d/usr/sbin/policy-rc.d"
	chmod 0755 "$d/usr/sbin/policy-rc.d"
	# The same sources as the official image, security updates included.
	rm -f "$d/etc/apt/sources.list"
	cat > "$d/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	find "$d/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
	find "$d/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
	rm -rf "$d/usr/share/man"/* "$d/usr/share/info"/* "$d/usr/share/lintian" "$d/usr/share/linda"
	find "$d/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} + 2>/dev/null || true
	rm -rf "$d/var/lib/apt/lists"/* "$d/var/cache/apt"/* "$d/var/cache/debconf"/*-old \
		"$d/var/log"/*.log "$d/var/log/apt"/* "$d/tmp"/* "$d/root/.bash_history"
	# Per-container files: the runtime supplies them.
	: > "$d/etc/resolv.conf"
	: > "$d/etc/hostname"
	: > "$d/etc/machine-id" 2>/dev/null || true
}

# Removes a scratch tree, first unmounting whatever debootstrap may have left mounted in it (proc, sys
# after a failed second stage), so rm cannot walk into them.
drop_tree() {
	local m
	for m in $(findmnt -rno TARGET | grep -F "$1/" | sort -r || true); do umount -l "$m" || true; done
	rm -rf --one-file-system "$1"
}

# Bootstraps the base rootfs tar unless a recent one is cached; sets fresh=1 when it made a new one.
fresh=0
make_base_tar() {
	if [ -s "$BASE_TAR" ] && [ "$MAX_AGE" -gt 0 ] && \
	   [ -n "$(find "$BASE_TAR" -mtime -"$MAX_AGE" 2>/dev/null)" ]; then
		return 0
	fi
	local tmp
	tmp=$(mktemp -d "$CACHE/base-$SUITE.XXXXXX")
	log "debootstrap --variant=minbase $SUITE (about a minute)"
	if ! debootstrap --variant=minbase "$SUITE" "$tmp/rootfs" "$MIRROR" > "$tmp/debootstrap.log" 2>&1; then
		tail -20 "$tmp/debootstrap.log" >&2
		drop_tree "$tmp"
		die "debootstrap failed (log above)"
	fi
	slim_rootfs "$tmp/rootfs"
	mkdir -p "$BASE_DIR"
	tar --numeric-owner --xattrs --acls -C "$tmp/rootfs" -cf "$tmp/rootfs.tar" .
	mv "$tmp/rootfs.tar" "$BASE_TAR"
	date -u +%Y-%m-%dT%H:%M:%SZ > "$BASE_DIR/created"
	drop_tree "$tmp"
	fresh=1
	log "base rootfs: $BASE_TAR ($(du -m "$BASE_TAR" | cut -f1) MB)"
}

# Imports the tar as $BASE_REF unless the stored image came from this very tar (label base.sha256).
import_base() {
	local fresh=$1 sum have ctr
	sum=$(cat "$BASE_TAR.sha256" 2>/dev/null || true)
	if [ "$fresh" = 1 ] || [ -z "$sum" ]; then
		sum=$(sha256sum "$BASE_TAR" | cut -d' ' -f1)
		echo "$sum" > "$BASE_TAR.sha256"
	fi
	have=$(buildah inspect --type image --format '{{index .ImageAnnotations "io.gpu-scheduler.base.sha256"}}' \
		"$BASE_REF" 2>/dev/null || true)
	if [ "$have" != "$sum" ]; then
		log "importing the base as $BASE_REF"
		ctr=$(buildah from --pull=never scratch)
		buildah add "$ctr" "$BASE_TAR" / >/dev/null
		buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			--cmd bash --annotation "io.gpu-scheduler.base.sha256=$sum" \
			--created-by "debootstrap --variant=minbase $SUITE, slimmed by tests/cluster/images.sh" "$ctr"
		buildah commit --quiet --rm "$ctr" "$BASE_REF" >/dev/null
	fi
	# `FROM debian:bookworm-slim` resolves, with --pull=never, to one of these local names.
	buildah tag "$BASE_REF" "docker.io/library/debian:$SUITE-slim"
}

make_base_tar
import_base "$fresh"

# --- building and checking ------------------------------------------------------------------------

# build NAME CONTAINERFILE ENTRYPOINT-ARGS...
build_image() {
	local name=$1 file=$2 start
	shift 2
	start=$(date +%s)
	log "building $name:latest from $file"
	# --network=host: RUN steps use the host's network as they are. buildah's default sets up a CNI
	# bridge (cni-podman0) for them, which turns net.ipv4.ip_forward on for the whole host and leaves
	# the bridge behind: a change to the machine that no one asked for (found by the e2e teardown check).
	buildah bud --pull=never --layers --quiet --network=host -f "$file" \
		--build-arg "BASE_IMAGE=debian:$SUITE-slim" --build-arg "VERSION=$VERSION" \
		-t "localhost/$name:latest" . >/dev/null
	check_image "$name" "$@"
	mkdir -p "$OUT"
	rm -f "$OUT/$name.tar"
	# The tag inside the archive is docker.io/library/NAME:latest, which is what a kubelet (and kind)
	# looks for when a pod says `image: NAME:latest`.
	buildah push --quiet "localhost/$name:latest" "docker-archive:$OUT/$name.tar:docker.io/library/$name:latest" \
		>/dev/null
	log "$name: $OUT/$name.tar, $(du -k "$OUT/$name.tar" | cut -f1) KiB archive, built in $(($(date +%s) - start)) s"
}

# check_image NAME ARGS...: user, size, and one run of the entrypoint as that user on a read-only root.
check_image() {
	local name=$1 ref="localhost/$1:latest" user entry size ctr mnt
	shift
	user=$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$ref")
	entry=$(buildah inspect --type image --format '{{index .OCIv1.Config.Entrypoint 0}}' "$ref")
	size=$(buildah images --format '{{.Size}}' "$ref" | head -1)
	[ "$user" = "65532:65532" ] || die "$name: image user is '$user', want 65532:65532"
	log "$name: user $user, entrypoint $entry, size $size"
	ctr=$(buildah from --pull=never "$ref")
	mnt=$(buildah mount "$ctr")
	# A private mount namespace with a read-only bind of the image: what readOnlyRootFilesystem gives.
	# shellcheck disable=SC2016 # expanded by the inner shell
	if ! unshare -m --propagation private sh -c '
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" &&
		exec chroot --userspec=65532:65532 "$@"' sh "$mnt" "$entry" "$@" > "$OUT/$name.run" 2>&1; then
		cat "$OUT/$name.run" >&2
		buildah umount "$ctr" >/dev/null; buildah rm "$ctr" >/dev/null
		die "$name: $entry $* failed in the image"
	fi
	buildah umount "$ctr" >/dev/null
	buildah rm "$ctr" >/dev/null
	log "$name: ran '$entry $*' as 65532 on a read-only root: $(head -1 "$OUT/$name.run")"
	rm -f "$OUT/$name.run"
}

mkdir -p "$OUT"
if [ "$WHAT" = check ] || [ "$WHAT" = all ]; then
	build_image gpu-scheduler-check check/Containerfile --once
fi
if [ "$WHAT" = main ] || [ "$WHAT" = all ]; then
	build_image gpu-scheduler Containerfile --version
fi
