# shellcheck shell=bash
# Go for the test fixtures (sourced): Go 1.26 from /usr/local/go (the machines have it; Kubernetes 1.37
# needs it), the module and build caches outside the repository, keyed by Go's version.
GS_CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
[ -x /usr/local/go/bin/go ] && PATH=/usr/local/go/bin:$PATH
command -v go >/dev/null || { echo "go is needed (Go 1.26 at /usr/local/go)" >&2; exit 1; }
export PATH GOMODCACHE=$GS_CACHE/gomod GOFLAGS=-modcacherw GOTOOLCHAIN=local
GOCACHE=$GS_CACHE/gocache-$(go env GOVERSION)
export GOCACHE
