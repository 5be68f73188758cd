# gpu-scheduler: one hand-written GNU Makefile.
#
#   make                 build/gpu-scheduler and build/gpu-scheduler-check
#   make unit            unit tests (cmocka), no cluster needed, then make style and its own test
#   make style           the house rules by machine: scripts/checksrc.py (format, allocation, uv_close,
#                        naming, function length, layering, docs' citations; docs/style.md)
#   make graph           src/'s include graph: import circles, arrows back up (scripts/graph.py)
#   make test            unit + integration tests against a real kube-apiserver, then end to end on real
#                        kubelets (as root); ends with "N passed, N failed"
#   make e2e             the end-to-end tests alone
#   make chaos           the chaos suite at full size (tests/chaos/run.sh; CHAOS_SIZE=short, CHAOS_NAMES=...)
#   make check           the tests again under ASan+UBSan (build-asan/), every fuzzer for 30 s, then
#                        valgrind on the unit tests
#   make fuzz            every tests/fuzz/fuzz_*.c built with libFuzzer+ASan+UBSan into build-fuzz/ and run
#                        FUZZ_SECONDS (60) each, one after the other (docs/reliability.md)
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
LDLIBS   += -luv -lmbedtls -lmbedx509 -lmbedcrypto -lyaml -lcjson -lnghttp2 -lm

# Explicit module lists would go stale while several people add files at once; each directory is a
# module group and every .c in it belongs to the daemon's library.
CORE_SRC    := $(sort $(wildcard src/core/*.c))
K8S_SRC     := $(sort $(wildcard src/k8s/*.c))
SCHED_SRC   := $(sort $(wildcard src/sched/*.c))
WEBHOOK_SRC := $(sort $(wildcard src/webhook/*.c))
LINT_SRC    := $(sort $(wildcard src/lint/*.c))
LIB_SRC     := $(CORE_SRC) $(K8S_SRC) $(SCHED_SRC) $(WEBHOOK_SRC) $(LINT_SRC)
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/%.o)
LLHTTP_OBJ  := $(B)/third_party/llhttp/llhttp.o $(B)/third_party/llhttp/api.o $(B)/third_party/llhttp/http.o
MAIN_OBJ    := $(B)/src/main.o $(B)/src/main_opts.o
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
CHECK_SRC   := $(sort $(wildcard check/*.c))
BENCH_SRC   := $(sort $(wildcard bench/*.c))

BIN := $(B)/gpu-scheduler $(B)/gpu-scheduler-check $(B)/gpu-scheduler-bench $(B)/gpu-scheduler-webhook-bench \
	$(B)/gpu-scheduler-engine-bench $(B)/gpu-scheduler-decode-bench $(B)/gpu-scheduler-tls-bench

.PHONY: all unit test test-compat prepare check clean integration e2e layering graph style images kind-demo demo demo-down evidence manifests bench bench-full bench-webhook bench-smoke fuzz chaos
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
$(B)/src/main.o: $(B)/.version
$(B)/src/main.o: CPPFLAGS += -DGS_VERSION='"$(VERSION)"'

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

$(B)/gpu-scheduler-engine-bench: $(B)/bench/engine.o $(B)/libgs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gpu-scheduler-decode-bench: $(B)/bench/decode.o $(B)/libgs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gpu-scheduler-tls-bench: $(B)/bench/tls.o $(B)/libgs.a
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

# A stand-in for the driver's NVML, for the agent's MIG reader (tests/fixtures/nvml/fake_nvml.c); dlopen'd
# by test_agent from beside itself, and by the integration tests' agent (--nvml-library).
$(B)/tests/libfake-nvml.so: tests/fixtures/nvml/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) -O1 -g $(WARN) -shared -fPIC -o $@ $<
$(B)/tests/test_agent: $(B)/tests/libfake-nvml.so

unit: $(UNIT_BIN) $(MAIN_OBJ)
	@tests/run-unit.sh $(UNIT_BIN)
	@tests/cluster/test_socket_paths.sh
	@scripts/checksrc.py
	@tests/style/test_checksrc.sh >$(B)/style-test.log 2>&1 || { cat $(B)/style-test.log; exit 1; }
	@tail -n 1 $(B)/style-test.log
	@tests/style/test_graph.sh $(B) >$(B)/graph-test.log 2>&1 || { cat $(B)/graph-test.log; exit 1; }
	@tail -n 1 $(B)/graph-test.log

# The house rules a machine checks (scripts/checksrc.py; docs/style.md), and src/'s use graph: no import
# circle, no arrow back up (scripts/graph.py --check, which reads the objects' symbols: they are built
# first). Their own tests, which plant one violation of each rule, are tests/style/test_checksrc.sh and
# tests/style/test_graph.sh (in make unit and make test).
style: $(LIB_OBJ) $(MAIN_OBJ)
	@scripts/checksrc.py
	@scripts/graph.py --build $(B) --check >$(B)/graph.log 2>&1 || { cat $(B)/graph.log; exit 1; }
	@echo "graph: no import circle, no arrow back up ($(B))"

# What the tests need, installed when missing (apt-get, as root), and Kubernetes 1.37.2, etcd, containerd,
# kubectl 1.35 and the device plugin built once from their Go modules into /var/cache/gpu-scheduler
# (tests/cluster/prepare.sh): `make test` is the README's test command on a fresh machine.
prepare:
	@tests/deps.sh
	@tests/cluster/prepare.sh

test: prepare
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@s=0; scripts/checksrc.py || s=1; tests/style/test_checksrc.sh || s=1; tests/style/test_graph.sh "$(B)" || s=1; \
		tests/run-all.sh "$(B)" || s=1; exit $$s

integration: all $(B)/tests/libfake-nvml.so
	@tests/run-all.sh "$(B)" integration

# The integration suite against the oldest Kubernetes the module proxy serves with DRA GA
# (K8S_COMPAT_VERSION in tests/cluster/versions.sh, built once like the default one).
COMPAT_VERSION = $(shell sed -n 's/^K8S_COMPAT_VERSION=//p' tests/cluster/versions.sh)
test-compat: all
	@K8S_VERSION=$(COMPAT_VERSION) tests/cluster/prepare.sh
	@K8S_VERSION=$(COMPAT_VERSION) tests/run-all.sh "$(B)" integration

# The end-to-end tests alone: images, four real kubelets, gpu-scheduler deployed from deploy/.
e2e: prepare all
	@tests/run-all.sh "$(B)" e2e

# The chaos suite: faults injected into a cluster of its own (docs/reliability.md, "Chaos").
CHAOS_SIZE ?= full
CHAOS_NAMES ?=
chaos: all
	@tests/chaos/run.sh "$(B)" $(CHAOS_SIZE) $(CHAOS_NAMES)

check: style
	GS_E2E=0 $(MAKE) B=build-asan SANITIZE=address,undefined DEBUG=1 CC=clang test
	$(MAKE) fuzz FUZZ_SECONDS=30
	$(MAKE) all $(UNIT_BIN)
	GS_VALGRIND=1 tests/run-unit.sh $(UNIT_BIN)

# ---- fuzzing ------------------------------------------------------------------------------------------
# Every tests/fuzz/fuzz_NAME.c is a libFuzzer harness (its header says what it feeds where and what it
# checks). Built with clang into build-fuzz/ (objects compiled once with -fsanitize=fuzzer-no-link and
# shared between harnesses), then run one after the other by tests/fuzz/run.sh over a working corpus in
# build-fuzz/corpus/NAME/, seeded from tests/fuzz/corpus/NAME/ and FUZZ_NAME_SEEDS. libFuzzer comes with
# clang's runtime (Debian: libclang-rt-14-dev, installed by tests/deps.sh).
FUZZ_B       := build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_LLHTTP  := $(LLHTTP_SRC)/llhttp.c $(LLHTTP_SRC)/api.c $(LLHTTP_SRC)/http.c

# What each harness links besides itself (the one list per harness; a new harness needs its own).
FUZZ_admission_SRC   := src/webhook/admission.c src/webhook/jsonpatch.c src/sched/gang.c src/sched/map.c src/sched/map_cache.c \
			src/sched/checks.c src/sched/objects.c src/core/buf.c src/core/log.c src/core/hmap.c src/core/alloc.c \
			src/core/json_nul.c
FUZZ_decode_SRC      := src/k8s/decode.c src/k8s/decode_json.c src/k8s/decode_items.c src/k8s/decode_scalar.c src/sched/objects.c src/core/log.c \
			src/core/json_nul.c
FUZZ_pb_SRC          := src/core/pb.c src/core/buf.c src/core/lines.c src/k8s/decode_pb.c src/k8s/decode_pb_wire.c \
			src/k8s/decode.c src/k8s/decode_json.c src/k8s/decode_items.c src/k8s/decode_scalar.c src/sched/objects.c src/core/log.c \
			src/core/json_nul.c
FUZZ_gpm_SRC         := src/k8s/decode_gpm.c src/k8s/decode_json.c src/k8s/decode_items.c src/sched/objects.c src/core/alloc.c \
			src/core/json_nul.c src/core/log.c
FUZZ_pdb_SRC         := src/k8s/decode_pdb.c src/k8s/decode_json.c src/k8s/decode_items.c src/sched/objects.c \
			src/sched/checks.c src/sched/map.c src/core/hmap.c src/core/alloc.c src/core/json_nul.c src/core/log.c
FUZZ_lease_SRC       := src/k8s/lease.c src/core/log.c
FUZZ_review_SRC      := src/k8s/review.c
FUZZ_map_SRC         := src/sched/map.c src/sched/map_cache.c src/core/hmap.c src/core/log.c src/core/alloc.c
FUZZ_gang_SRC        := src/sched/gang.c
FUZZ_lint_SRC        := src/lint/lint.c src/sched/gang.c src/sched/map.c src/sched/inuse.c src/core/hmap.c src/core/log.c src/core/alloc.c src/core/buf.c
FUZZ_json_items_SRC  := src/core/json_items.c src/core/buf.c src/core/log.c
FUZZ_kubeconfig_SRC  := src/k8s/kubeconfig.c src/core/alloc.c src/core/log.c
FUZZ_http_server_SRC := src/core/http_server.c src/core/conn.c src/core/tls.c src/core/buf.c src/core/log.c \
			src/core/options.c src/core/hmap.c src/core/alloc.c src/core/closer.c $(FUZZ_LLHTTP)
FUZZ_inuse_SRC       := src/sched/inuse.c src/core/buf.c src/core/log.c src/core/alloc.c
FUZZ_podresources_SRC := src/k8s/podresources.c src/core/pb.c src/core/buf.c src/core/log.c
FUZZ_nvinfo_SRC      := src/k8s/agent.c src/sched/inuse.c src/core/buf.c src/core/log.c src/core/alloc.c
FUZZ_grpc_client_SRC := src/core/grpc.c src/core/buf.c src/core/log.c src/core/alloc.c src/core/closer.c
FUZZ_http_client_SRC := src/core/http_client.c src/core/conn.c src/core/tls.c src/core/buf.c src/core/log.c \
			src/core/alloc.c src/core/closer.c $(FUZZ_LLHTTP)
# The kubeconfig harness confines the files its input may name (see its header).
FUZZ_kubeconfig_LDFLAGS := -Wl,--wrap=open
# Seeds read from where they live, besides tests/fuzz/corpus/NAME/.
FUZZ_admission_SEEDS  := $(wildcard tests/golden/admission/*.request.json)
FUZZ_decode_SEEDS     := $(wildcard tests/fixtures/json/*.json tests/fixtures/json/*.jsonl \
			   tests/fixtures/recorded-1.37/pod-*.json tests/fixtures/recorded-1.37/node-*.json)
FUZZ_pb_SEEDS         := $(wildcard tests/fixtures/recorded/*.pb tests/fixtures/recorded/*.pbw \
			   tests/fixtures/recorded-1.37/*.pb tests/fixtures/recorded-1.37/*.pbw \
			   tests/fixtures/k8s-serializers/*.pb tests/fixtures/k8s-serializers/*.pbw)
FUZZ_lease_SEEDS      := tests/fixtures/json/lease.json
FUZZ_gpm_SEEDS        := $(wildcard tests/fixtures/json/gpm*.json tests/fixtures/json/gpm*.jsonl)
FUZZ_pdb_SEEDS        := $(wildcard tests/fixtures/json/pdb*.json tests/fixtures/json/pdb*.jsonl)
FUZZ_json_items_SEEDS := $(wildcard tests/fixtures/json/list-*.json)
FUZZ_kubeconfig_SEEDS := $(wildcard tests/fixtures/kubeconfig/*.yaml)
FUZZ_lint_SEEDS       := $(wildcard tests/fixtures/lint/*.yaml) $(wildcard deploy/examples/*.yaml)
FUZZ_http_server_DICT := tests/fuzz/http.dict
FUZZ_http_client_DICT := tests/fuzz/http.dict

FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BIN   := $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
fuzz_dict   = $(or $(FUZZ_$(1)_DICT),$(wildcard tests/fuzz/$(1).dict))
fuzz_objs   = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(patsubst $(LLHTTP_SRC)/%,third_party/llhttp/%,$(1)))

FUZZ_FLAGS_LINE := $(FUZZ_CC) $(CSTD) $(FUZZ_SAN) $(WARN) $(LDLIBS)
$(FUZZ_B)/.flags: FORCE
	@mkdir -p $(FUZZ_B)
	@echo '$(FUZZ_FLAGS_LINE)' | cmp -s - $@ || echo '$(FUZZ_FLAGS_LINE)' > $@

$(FUZZ_B)/obj/%.o: %.c $(FUZZ_B)/.flags
	@mkdir -p $(@D)
	$(FUZZ_CC) -Isrc -I$(LLHTTP_INC) -MMD -MP $(CSTD) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(WARN) -c -o $@ $<

$(FUZZ_B)/obj/third_party/llhttp/%.o: $(LLHTTP_SRC)/%.c $(FUZZ_B)/.flags
	@mkdir -p $(@D)
	$(FUZZ_CC) -I$(LLHTTP_INC) $(CSTD) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -w -c -o $@ $<

define fuzz_link
$(FUZZ_B)/fuzz_$(1): $(FUZZ_B)/obj/tests/fuzz/fuzz_$(1).o $(call fuzz_objs,$(FUZZ_$(1)_SRC))
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_$(1)_LDFLAGS) -o $$@ $$^ $(LDLIBS)
endef
$(foreach h,$(FUZZ_NAMES),$(eval $(call fuzz_link,$(h))))

# One harness at a time (also under make -j: the loop is one recipe), each for FUZZ_SECONDS.
# Some only: make fuzz FUZZ_NAMES='map lease' FUZZ_SECONDS=600
fuzz: $(FUZZ_BIN)
	@fail=0; $(foreach h,$(FUZZ_NAMES),tests/fuzz/run.sh $(h) $(FUZZ_SECONDS) '$(call fuzz_dict,$(h))' \
		$(FUZZ_$(h)_SEEDS) || fail=1;) exit $$fail

# src/'s include graph: import circles and arrows back up per folder (scripts/graph.py defines both;
# docs/architecture.md, "Structure"), read from the sources and the objects' symbols; dot text in
# $(B)/graph.dot (`dot -Tsvg $(B)/graph.dot > graph.svg` where graphviz is installed).
graph: $(LIB_OBJ) $(MAIN_OBJ)
	@scripts/graph.py --build $(B) --dot $(B)/graph.dot
	@echo 'graph: dot text in $(B)/graph.dot'

# Dependencies point one way: sched -> core; k8s and webhook -> core and sched, never each other (one
# rule of make style, scripts/checksrc.py, which has the list).
layering:
	@scripts/checksrc.py layering

# bench/: each contender on the same pending pods, against the local control plane (docs/performance.md);
# gpu-scheduler runs twice, protobuf then JSON (--encoding protobuf,json, the default). Then, on a
# fresh control plane, one all-or-nothing gang of 1,000 members (--shape gang: the time from the last
# member's creation to the gang bound; kube-scheduler has no gangs and is not run). Then the same 5,000
# pods with their maps by reference (--shape ref: one GPUPlacementMap per 1,000 pods, the CRD installed
# by the bench; raw binder and gpu-scheduler only, to keep the run short).
BENCH_ARGS ?=
BENCH_GANG_ARGS ?= --out build/bench-gang
BENCH_REF_ARGS ?= --out build/bench-ref
bench: all
	bench/bench.sh --nodes 1000 --pods 5000 $(BENCH_ARGS)
	bench/bench.sh --nodes 1000 --pods 1000 --shape gang --contenders raw,gpu-scheduler $(BENCH_GANG_ARGS)
	bench/bench.sh --nodes 1000 --pods 5000 --shape ref --contenders raw,gpu-scheduler $(BENCH_REF_ARGS)

# The scale sweep (1k..20k pods, 100 and 1,000 nodes, events on and off): build/bench-full/summary.md.
bench-full: all
	bench/bench-full.sh

# The admission webhook: AdmissionReviews sent directly, then pod creates with and without it.
bench-webhook: all
	bench/bench.sh webhook $(BENCH_ARGS)

bench-smoke: all
	bench/bench.sh --nodes 20 --pods 200 --shape mixed --contenders raw,gpu-scheduler $(BENCH_ARGS)
	bench/bench.sh --nodes 10 --pods 20 --shape gang --gang-hold 1500 --contenders raw,gpu-scheduler --out build/bench-smoke-gang

# The local demo (README): a real control plane, kubelets node1..node4 with containerd, gpu-scheduler
# deployed from its image, and the example StatefulSet Running. As root. DEPLOY=helm installs the Helm
# chart (charts/gpu-scheduler) instead of deploy/.
DEPLOY ?= kustomize
demo:
	GS_DEPLOY_WITH=$(DEPLOY) scripts/demo.sh up

demo-down:
	scripts/demo.sh down

# docs/evidence/ from a fresh run of the demo (which it tears down afterwards).
evidence:
	scripts/evidence.sh

# deploy/install.yaml: deploy/ + the self-signed Component as one file (for kubectl < 1.21).
manifests:
	tests/cluster/deploy.sh render

# Images with buildah on a debootstrap base (no Docker needed); docker-archive tars under build/images/.
images:
	tests/cluster/images.sh all

# For machines with docker and kind: a kind cluster whose four workers are labelled
# gpu-scheduler.io/node=node1..node4, the names the example map uses (deploy/kind/; node aliases).
kind-demo:
	deploy/kind/demo.sh

clean:
	rm -rf $(B) build-asan $(FUZZ_B)

# Only where objects live: build/ also holds clusters, whose container images have directories named *.d.
-include $(shell find $(B)/src $(B)/tests $(B)/bench $(B)/third_party -name '*.d' -type f 2>/dev/null)
-include $(shell find $(FUZZ_B)/obj -name '*.d' -type f 2>/dev/null)
