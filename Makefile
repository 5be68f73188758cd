# gpu-scheduler: one hand-written GNU Makefile.
#
#   make                 build/gpu-scheduler and build/gpu-scheduler-check
#   make unit            unit tests (cmocka), no cluster needed
#   make test            unit + integration tests against a real kube-apiserver, then end to end on real
#                        kubelets (as root); ends with "N passed, N failed"
#   make e2e             the end-to-end tests alone
#   make check           the tests again under ASan+UBSan (build-asan/), then valgrind on the unit tests
#   make SANITIZE=address,undefined DEBUG=1 CC=clang ...
#
# Objects live under $(B) (build/ by default); flags are recorded so a change of flags rebuilds.

CC       ?= cc
B        ?= build
DEBUG    ?= 0
SANITIZE ?=
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo 0.1.0)

LLHTTP_SRC ?= /usr/share/llhttp
LLHTTP_INC ?= /usr/share/include/llhttp

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CSTD     := -std=c11 -D_GNU_SOURCE
OPT      := $(if $(filter 1,$(DEBUG)),-O0 -g3,-O2 -g)
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
CPPFLAGS += -Isrc -I$(LLHTTP_INC) -MMD -MP
CFLAGS   += $(CSTD) $(OPT) $(WARN) $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
LDLIBS   += -luv -lmbedtls -lmbedx509 -lmbedcrypto -lyaml -lcjson -lm

# Explicit module lists would go stale while several people add files at once; each directory is a
# module group and every .c in it belongs to the daemon's library.
CORE_SRC    := $(sort $(wildcard src/core/*.c))
K8S_SRC     := $(sort $(wildcard src/k8s/*.c))
SCHED_SRC   := $(sort $(wildcard src/sched/*.c))
WEBHOOK_SRC := $(sort $(wildcard src/webhook/*.c))
LIB_SRC     := $(CORE_SRC) $(K8S_SRC) $(SCHED_SRC) $(WEBHOOK_SRC)
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/%.o)
LLHTTP_OBJ  := $(B)/third_party/llhttp/llhttp.o $(B)/third_party/llhttp/api.o $(B)/third_party/llhttp/http.o
MAIN_OBJ    := $(B)/src/main.o
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
CHECK_SRC   := $(sort $(wildcard check/*.c))
BENCH_SRC   := $(sort $(wildcard bench/*.c))

BIN := $(B)/gpu-scheduler $(B)/gpu-scheduler-check $(B)/gpu-scheduler-bench $(B)/gpu-scheduler-webhook-bench

.PHONY: all unit test prepare check clean integration e2e layering images kind-demo demo demo-down evidence manifests bench bench-full bench-webhook bench-smoke
all: $(BIN)

# Rebuild everything when the flags change.
# (Expanded once, at parse time: target-specific additions such as main.o's version must not leak in.)
FLAGS_LINE := $(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(LDLIBS)
$(B)/.flags: FORCE
	@mkdir -p $(B)
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@
FORCE:

# Only main.c sees the version, so a new commit rebuilds one object, not all of them.
$(B)/.version: FORCE
	@mkdir -p $(B)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(MAIN_OBJ): $(B)/.version
$(MAIN_OBJ): CPPFLAGS += -DGS_VERSION='"$(VERSION)"'

$(B)/%.o: %.c $(B)/.flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# llhttp is generated code: compiled as shipped by Debian, with its own (quieter) warning set.
$(B)/third_party/llhttp/%.o: $(LLHTTP_SRC)/%.c $(B)/.flags
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(OPT) $(SANFLAGS) -I$(LLHTTP_INC) -w -c -o $@ $<

$(B)/libgs.a: $(LIB_OBJ) $(LLHTTP_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/gpu-scheduler: $(MAIN_OBJ) $(B)/libgs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gpu-scheduler-bench: $(B)/bench/bench.o $(B)/bench/util.o $(B)/libgs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gpu-scheduler-webhook-bench: $(B)/bench/webhook.o $(B)/bench/util.o $(B)/libgs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The check service is standalone: libc only, linked statically when the toolchain allows it.
CHECK_STATIC := $(if $(SANITIZE),,-static)
$(B)/gpu-scheduler-check: $(CHECK_SRC) $(B)/.flags
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(OPT) $(WARN) $(SANFLAGS) -o $@ $(CHECK_SRC) $(LDFLAGS) $(CHECK_STATIC)

$(B)/tests/%: tests/unit/%.c $(B)/libgs.a $(B)/.flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -o $@ $< $(B)/libgs.a $(LDFLAGS) $(LDLIBS) -lcmocka

unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

# What the tests need, installed when missing (apt-get, as root) and the Kubernetes 1.20.2 binaries built
# once into /var/cache/gpu-scheduler: `make test` is the README's test command on a fresh machine.
prepare:
	@tests/deps.sh
	@tests/cluster/build-k8s.sh >/dev/null

test: prepare
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@tests/run-all.sh "$(B)"

integration: all
	@tests/run-all.sh "$(B)" integration

# The end-to-end tests alone: images, four real kubelets, gpu-scheduler deployed from deploy/.
e2e: prepare all
	@tests/run-all.sh "$(B)" e2e

check: layering
	GS_E2E=0 $(MAKE) B=build-asan SANITIZE=address,undefined DEBUG=1 CC=clang test
	$(MAKE) all $(UNIT_BIN)
	GS_VALGRIND=1 tests/run-unit.sh $(UNIT_BIN)

# Dependencies point one way: sched -> core; k8s and webhook -> core and sched.
layering:
	@! grep -nE '#include\s*[<"](uv\.h|mbedtls/)' src/sched/*.c src/sched/*.h 2>/dev/null || { echo 'layering: src/sched must not use libuv or mbedTLS'; exit 1; }
	@! grep -nE '#include\s*"(k8s|sched|webhook)/' src/core/*.c src/core/*.h 2>/dev/null || { echo 'layering: src/core must not know Kubernetes'; exit 1; }
	@! grep -nE '#include\s*"(k8s|webhook)/' src/sched/*.c src/sched/*.h 2>/dev/null || { echo 'layering: src/sched depends on core only'; exit 1; }
	@echo 'layering: ok'

# bench/: each contender on the same pending pods, against the local control plane (docs/performance.md).
BENCH_ARGS ?=
bench: all
	tests/cluster/bench.sh --nodes 1000 --pods 5000 $(BENCH_ARGS)

# The scale sweep (1k..20k pods, 100 and 1,000 nodes, events on and off): build/bench-full/summary.md.
bench-full: all
	tests/cluster/bench-full.sh

# The admission webhook: AdmissionReviews sent directly, then pod creates with and without it.
bench-webhook: all
	tests/cluster/bench.sh webhook $(BENCH_ARGS)

bench-smoke: all
	tests/cluster/bench.sh --nodes 20 --pods 200 --shape mixed --contenders raw,gpu-scheduler $(BENCH_ARGS)

# The local demo (README): a real control plane, kubelets node1..node4 with containerd, gpu-scheduler
# deployed from its image, and the example StatefulSet Running. As root.
demo:
	tests/cluster/demo.sh up

demo-down:
	tests/cluster/demo.sh down

# docs/evidence/ from a fresh run of the demo (which it tears down afterwards).
evidence:
	tests/cluster/evidence.sh

# deploy/install.yaml: deploy/ + the self-signed Component as one file (for kubectl < 1.21).
manifests:
	tests/cluster/deploy.sh render

# Images with buildah on a debootstrap base (no Docker needed); docker-archive tars under build/images/.
images:
	tests/cluster/images.sh all

# For machines with docker and kind: a kind cluster with workers node1..node4 (deploy/kind/).
kind-demo:
	deploy/kind/demo.sh

clean:
	rm -rf $(B) build-asan

# Only where objects live: build/ also holds clusters, whose container images have directories named *.d.
-include $(shell find $(B)/src $(B)/tests $(B)/bench $(B)/third_party -name '*.d' -type f 2>/dev/null)
