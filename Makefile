SHELL := /bin/bash
# Builds use every CPU (the tests themselves run one at a time: each test
# target is one recipe that runs them in turn); `make -jN` still wins.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc)
endif
# vxswitch: plain Makefile, no configure step.
#
#   make            build daemon, CLI, benchmarks (-O2 -Wall -Wextra -Werror)
#   make test       every test: unit (plain and ASan+UBSan), golden frames
#                   against tshark, fuzz targets (FUZZ_SECONDS each), netns
#                   system tests
#   make fuzz       run each fuzz target for FUZZ_SECONDS (default 60)
#   make fuzz-long  the long campaign: FUZZ_LONG_SECONDS (1800) per target,
#                   stats and a summary under build-fuzz/fuzz-long/
#                   (docs/FUZZING.md keeps the record)
#   make soak       everything hostile at once for SOAK_SECONDS (1800)
#                   against an ASan daemon (needs root; not in make test)
#   make bench      build and run the micro-benchmarks
#   make demo       the two-host overlay demo (needs root)
#   make demo-evpn  vxswitch in a BGP EVPN fabric run by FRR (needs root)
#   make install    vxswitchd, vxctl, man pages, systemd unit, example config
#                   under PREFIX (default /usr/local), staged in DESTDIR
#
# Sources are discovered: every src/**/*.c except *_main.c goes into
# libvx.a; src/<dir>/<prog>_main.c becomes build/<prog>; bench/bench_*.c,
# tests/unit/**/test_*.c and fuzz/fuzz_*.c each become one program.

CC        ?= gcc
FUZZ_CC   ?= clang
BUILD     ?= build
CFLAGS_BASE := -std=gnu11 -g -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
               -D_GNU_SOURCE -Isrc -Itests/unit/support
OPT       ?= -O2
SAN       ?=
CFLAGS    := $(CFLAGS_BASE) $(OPT) $(SAN) $(EXTRA_CFLAGS)
LDLIBS    := -lpcap -lmicrohttpd -ljansson -lbpf -lelf -lz -lmnl -lpthread -lm
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 4

# LIB_DIRS narrows the library (and programs) to some layers, so work on one
# layer can build while another is half-written: make LIB_DIRS="src/packet src/parse"
LIB_DIRS   ?= src
LIB_SRCS   := $(filter-out %_main.c %.bpf.c,$(shell find $(LIB_DIRS) -name '*.c' | sort))
PROG_SRCS  := $(shell find $(LIB_DIRS) -name '*_main.c' | sort)
BENCH_SRCS := $(wildcard bench/bench_*.c)
# TESTS_DIRS narrows the unit tests the same way.
TEST_DIRS  ?= tests/unit
TEST_SRCS  := $(shell find $(TEST_DIRS) -name 'test_*.c' | sort)
# refuse_offloads.c is an LD_PRELOAD object (fault injection), not a program.
TOOL_SRCS  := $(filter-out tests/tools/refuse_offloads.c,$(wildcard tests/tools/*.c))
SUPPORT_SRCS := $(shell find tests/unit -name '*.c' ! -name 'test_*.c' | sort)
FUZZ_SRCS  := $(wildcard fuzz/fuzz_*.c)

# The GRO engine is split by layer into files (gro.c, gro_tcp.c, gro_vxlan.c,
# gro_table.c: offload/gro_internal.h), but its slow path runs every layer
# per segment: as separate units the calls between them cost bench_gro
# burst32 ~13 % on short trains (commit 1d7bdd9).  Link-time optimisation
# of those objects inlines them again (fat objects: a link without -flto
# still finds ordinary code in them).
GRO_LTO    := -flto=auto -ffat-lto-objects
LTO_LINK   := -flto=auto
$(patsubst %.c,$(BUILD)/%.o,$(filter src/offload/gro%.c,$(LIB_SRCS))): CFLAGS += $(GRO_LTO)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
SUPPORT_OBJS := $(SUPPORT_SRCS:%.c=$(BUILD)/%.o)
PROGS      := $(foreach p,$(PROG_SRCS),$(BUILD)/$(patsubst %_main.c,%,$(notdir $(p))))
BENCHES    := $(BENCH_SRCS:%.c=$(BUILD)/%)
TESTS      := $(TEST_SRCS:%.c=$(BUILD)/%)
TOOLS      := $(TOOL_SRCS:%.c=$(BUILD)/%)
PRELOADS   := $(BUILD)/tests/tools/refuse_offloads.so
LIB        := $(BUILD)/libvx.a

.PHONY: all install deps layout test unit unit-run unit-asan asan-daemon unit-tsan tsan-daemon golden bench-unit fuzz fuzz-long fuzz-build netns soak bench bench-gro-check bench-flower-scale bench-capture bench-profile bench-smoke micro demo demo-evpn bench-evpn clean
.DEFAULT_GOAL := all
.SECONDARY:

all: $(LIB) $(PROGS) $(BENCHES) $(TOOLS) $(PRELOADS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# eBPF programs (src/**/*.bpf.c): clang's BPF target, then a libbpf
# skeleton header next to the object, which the loader includes.  Each
# build dir (plain, ASan, TSan, fuzz) makes its own.
BPF_CLANG  ?= clang
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -I/usr/include/$(shell $(CC) -print-multiarch)
define bpf_rules
$(1)/%.bpf.o: %.bpf.c $(wildcard src/dp/kernel/bpf/*.h)
	@mkdir -p $$(dir $$@)
	$$(BPF_CLANG) $$(BPF_CFLAGS) -I$$(dir $$<) -c $$< -o $$@
$(1)/%.skel.h: $(1)/%.bpf.o
	bpftool gen skeleton $$< name $$(notdir $$*) > $$@.tmp && mv $$@.tmp $$@
# The loader includes the skeleton of the datapath programs (kdp_internal.h).
$(1)/src/dp/kernel/kdp.o $(1)/src/dp/kernel/kdp_maps.o $(1)/tests/unit/dp/kernel/test_vxdp_prog.o: $(1)/src/dp/kernel/bpf/vxdp.skel.h
endef
$(eval $(call bpf_rules,$(BUILD)))
CFLAGS += -I$(BUILD)/src/dp/kernel/bpf

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

define prog_rule
$(BUILD)/$(patsubst %_main.c,%,$(notdir $(1))): $(BUILD)/$(1:.c=.o) $(LIB)
	$$(CC) $$(CFLAGS) $$(LTO_LINK) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach p,$(PROG_SRCS),$(eval $(call prog_rule,$(p))))

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	$(CC) $(CFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

# tests/tools/*.c: helper programs the golden and netns tests run.
$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIB)
	$(CC) $(CFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

# The netns tests preload it into vxswitchd, which is built without
# sanitizers: so is it, whatever SAN says.
$(BUILD)/tests/tools/refuse_offloads.so: tests/tools/refuse_offloads.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(OPT) -shared -fPIC -o $@ $< -ldl

# gro_diff builds its segment sequences with the unit tests' frame builder;
# its parts other than the driver are in tests/tools/grodiff/.
GRO_DIFF_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/tools/grodiff/*.c))
$(BUILD)/tests/tools/gro_diff: $(BUILD)/tests/tools/gro_diff.o $(GRO_DIFF_OBJS) $(BUILD)/tests/unit/support/frame_builder.o $(LIB)
	$(CC) $(CFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(SUPPORT_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(LTO_LINK) -o $@ $^ -lcmocka $(LDLIBS)

# ---- tests ---------------------------------------------------------------

unit-run: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

unit: all
	@$(MAKE) --no-print-directory unit-run

ASAN_BUILD ?= build-asan
ASAN_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
unit-asan:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 SAN="$(ASAN_SAN)" unit-run

# The daemon under ASan+UBSan, for the netns tests that throw bad input at it.
asan-daemon:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 SAN="$(ASAN_SAN)" \
	  $(ASAN_BUILD)/vxswitchd $(ASAN_BUILD)/vxctl

# The threaded parts (daemon: control thread + workers; util: qsbr, vlog,
# failpoints; switch: the FDB and VNI map the workers share) under
# ThreadSanitizer.  Only tests that run more than one thread: TSan finds
# races between threads, so a single-threaded test (the classifier's, the
# eBPF programs' over BPF_PROG_TEST_RUN) costs minutes under it and can
# find nothing; ASan+UBSan runs those.
TSAN_BUILD ?= build-tsan
TSAN_SAN := -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := tests/unit/control tests/unit/dp/user tests/unit/report tests/unit/util \
	      tests/unit/switch/test_fdb_threads.c tests/unit/switch/test_vni_map.c
unit-tsan:
	@$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) OPT=-O1 TEST_DIRS="$(TSAN_TESTS)" \
	  SAN="$(TSAN_SAN)" unit-run

# The daemon under ThreadSanitizer, for the netns test of many workers.
tsan-daemon:
	@$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) OPT=-O1 SAN="$(TSAN_SAN)" \
	  $(TSAN_BUILD)/vxswitchd $(TSAN_BUILD)/vxctl

# The rules between the rooms of src/ (docs/DESIGN.md, "Rooms"), over
# #include lines; violations not yet mended are listed in
# scripts/layout-known.txt, which may only shrink.
layout:
	tests/scripts/test_check_layout.sh
	scripts/check-layout.py src scripts/layout-known.txt

golden: all
	tests/golden/check.sh $(BUILD)

# The benchmark tooling's own logic over crafted input (tests/bench/).
bench-unit:
	@set -e; for t in $(sort $(wildcard tests/bench/test_*.py)); do /usr/bin/python3 $$t; done

netns: all
	@set -e; for t in $(sort $(wildcard tests/netns/test_*.sh)); do \
	  echo "== $$t"; s=$$(date +%s); BUILD=$(BUILD) $$t; \
	  echo "== $$t: $$(( $$(date +%s) - s )) s"; done

# The soak (tests/netns/soak.sh): iperf3 both ways, the malformed
# catalogues, MAC flood bursts, port churn, reloads and captures at once
# against an ASan+UBSan daemon for SOAK_SECONDS (default 1800; 120 for the
# short mode), then no crash, no leak, RSS flat, counters consistent and
# forwarding back.  Not part of `make test`.
SOAK_SECONDS ?= 1800
soak: all
	SOAK_SECONDS=$(SOAK_SECONDS) BUILD=$(BUILD) tests/netns/soak.sh

# The two commands of the README install their Debian packages first, so a
# fresh machine needs nothing else.
deps:
	@scripts/install-deps.sh

test: deps
	@$(MAKE) --no-print-directory layout
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory unit-asan
	@$(MAKE) --no-print-directory unit-tsan
	@$(MAKE) --no-print-directory golden
	@$(MAKE) --no-print-directory bench-unit
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)
	@$(MAKE) --no-print-directory netns
	@$(MAKE) --no-print-directory bench-smoke

# vxbench's smoke mode: every datapath passes traffic and fills every column
# (a second per case, gso-wire only: mtu-wire is the same tooling with
# another MTU, and the two modes' OVS set-ups took 3 minutes of CI; it
# judges no speed).
# The smoke check of the benchmark tooling: the kernel, Open vSwitch's
# userspace datapath and vxswitch on both its datapaths (the TSO and AF_XDP
# variants of OVS, which take minutes to set up, run in `make bench` /
# `vxbench compare`).
bench-smoke: all
	BUILD=$(abspath $(BUILD)) bench/vxbench/vxbench compare --quick --datapaths kernel,ovs,vxswitch,vxswitch_bpf --modes gso-wire -o $(BUILD)/bench-smoke

# ---- fuzzing (clang libFuzzer, ASan+UBSan) --------------------------------

FUZZ_BUILD ?= build-fuzz
FUZZ_CFLAGS := $(CFLAGS_BASE) -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS += -I$(FUZZ_BUILD)/src/dp/kernel/bpf
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
$(eval $(call bpf_rules,$(FUZZ_BUILD)))
FUZZERS := $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZERS)

# Each target runs from its committed seed corpus (fuzz/corpus/<name>/, read
# only) into a scratch corpus; a crash fails the run and leaves the input in
# $(FUZZ_BUILD)/crash-*.  Committed crashers in fuzz/regressions/<name>/ are
# replayed first.
fuzz: fuzz-build
	@set -e; for f in $(FUZZERS); do n=$$(basename $$f); \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	  if [ -d fuzz/regressions/$$n ]; then $$f -runs=0 fuzz/regressions/$$n >/dev/null 2>&1 \
	    || { echo "$$n: regression input crashes"; exit 1; }; fi; \
	  echo "== fuzz $$n for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	    $(FUZZ_BUILD)/corpus/$$n $$( [ -d fuzz/corpus/$$n ] && echo fuzz/corpus/$$n ) 2>&1 \
	    | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|Done' ; \
	  test $${PIPESTATUS[0]} -eq 0; \
	done

# The long campaign: FUZZ_LONG_SECONDS (default 1800) per target, at
# FUZZ_NICE (chrt -i 0, SCHED_IDLE: only CPU nothing else wants), FUZZ_LONG_JOBS targets at
# once (default 1), FUZZ_LONG_TARGETS (default: all) -- e.g.
#   make fuzz-long FUZZ_LONG_TARGETS="fuzz_gro fuzz_gso" FUZZ_LONG_JOBS=2
# Every line of libFuzzer's final stats (-print_final_stats) is kept in
# $(FUZZ_BUILD)/fuzz-long/NAME.log and a record line per target (run time,
# executions, exec/s, cov, ft, corpus entries/bytes, findings) appended to
# $(FUZZ_BUILD)/fuzz-long/summary.txt, the figures docs/FUZZING.md keeps.
# A crash stops the target; its input is in $(FUZZ_BUILD)/crash-*:
# minimise it and commit it under fuzz/regressions/NAME/ with its fix.
FUZZ_LONG_SECONDS ?= 1800
FUZZ_LONG_JOBS ?= 1
FUZZ_LONG_TARGETS ?= $(notdir $(FUZZERS))
FUZZ_NICE ?= chrt -i 0
fuzz-long: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/fuzz-long; \
	printf '%s\n' $(FUZZ_LONG_TARGETS) | xargs -P $(FUZZ_LONG_JOBS) -I{} \
	  env FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_NICE="$(FUZZ_NICE)" scripts/fuzz-long-one.sh {} $(FUZZ_LONG_SECONDS)

# ---- benchmarks and demo ---------------------------------------------------

bench: all
	@set -e; for b in $(BENCHES); do echo "== $$b"; $$b; done

# The GRO engine against bench/gro_baseline.txt (instructions per frame
# under callgrind, judged; Mpps shown): fails past 2 % more instructions.
# BASE=<commit> compares with that commit built beside, alternately;
# UPDATE=1 writes the baseline.  Not in make test: ~1 min, and the figures
# belong to one compiler (scripts/bench-gro-check.sh).
bench-gro-check:
	BUILD=$(abspath $(BUILD)) scripts/bench-gro-check.sh

# The issue's million flower rules (tests/netns/test_flower_scale.sh at
# full size: flower.json's concurrency cases, add, replace and del of
# 1,000,000 rules from 10 parallel vxctl -b, with the add time, RSS per rule
# and iperf3 through the rules with the hit rule last against the hit rule
# alone), then the classifier's lookups at 1,000,000 rules, flow cache on
# and off.  Root, netns; some 10 minutes and 3 GB.  Not in make test (that
# runs the same test at 100,000 rules).
FSC_BENCH_RULES ?= 1000000
bench-flower-scale: all
	flock /tmp/vxswitch-netns.lock env BUILD=$(BUILD) FSC_RULES=$(FSC_BENCH_RULES) FSC_IPERF=10 FSC_ROUNDS=2 \
	  tests/netns/test_flower_scale.sh
	$(BUILD)/bench/bench_classifier -N $(FSC_BENCH_RULES)

# What a capture costs, during and once it ended: interleaved rounds of
# iperf3 before, during and after a capture, medians and spreads printed
# (bench/capture_cost.sh; DP=user or kernel; root, netns; ~3 minutes).
# make test checks the state a capture leaves.
DP ?= user
bench-capture: all
	flock /tmp/vxswitch-netns.lock env BUILD=$(BUILD) bench/capture_cost.sh 9 3 $(DP)

# Where the CPU goes in the kernel's bridge and vxswitch's kernel datapath:
# perf profiles of one iperf3 stream each, CPU us per KB by kind of work
# and by function against the bridge (`vxbench profile`, profile.sh;
# MODE=gso-wire|mtu-wire or both, comma-separated; root, netns; ~1 minute
# per mode).
MODE ?= gso-wire
bench-profile: all
	flock /tmp/vxswitch-netns.lock env BUILD=$(abspath $(BUILD)) bench/vxbench/vxbench profile --modes $(MODE) \
	  --datapaths kernel,vxswitch_bpf_nocsum

# One table of the micro-benchmarks (parse, checksum, GRO, GSO, FDB).
micro: all
	bench/vxbench/vxbench micro $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	scripts/demo.sh $(BUILD)

# EVPN at scale: N hosts (default 32) + a route reflector under FRR, vxswitchd
# against the kernel's vxlan + bridge (bench/evpn_scale.sh; root; minutes).
EVPN_HOSTS ?= 32
bench-evpn: all
	bench/evpn_scale.sh $(EVPN_HOSTS) vxswitch
	bench/evpn_scale.sh $(EVPN_HOSTS) vxswitch-kernel
	bench/evpn_scale.sh $(EVPN_HOSTS) kernel

# vxswitch in a BGP EVPN fabric of unmodified FRR (scripts/frr/*.conf as shipped).
demo-evpn: deps
	@$(MAKE) --no-print-directory all
	scripts/demo_evpn.sh $(BUILD)

# ---- install ---------------------------------------------------------------
#
# PREFIX/sbin/vxswitchd, PREFIX/bin/vxctl, PREFIX/share/man/man8/{vxswitchd,vxctl}.8,
# the unit PREFIX/lib/systemd/system/vxswitchd.service (made from
# contrib/vxswitchd.service.in with these paths; systemd reads
# /usr/local/lib/systemd/system too), PREFIX/lib/sysusers.d/vxswitch.conf,
# and PREFIX/share/doc/vxswitch/vxswitchd.conf.example.  Nothing goes to /etc.
PREFIX         ?= /usr/local
DESTDIR        ?=
BINDIR         ?= $(PREFIX)/bin
SBINDIR        ?= $(PREFIX)/sbin
MANDIR         ?= $(PREFIX)/share/man
DOCDIR         ?= $(PREFIX)/share/doc/vxswitch
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d

# The unit is made at each install, so a PREFIX change always reaches it.
install: $(BUILD)/vxswitchd $(BUILD)/vxctl
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 $(BUILD)/vxswitchd $(DESTDIR)$(SBINDIR)/vxswitchd
	install -m 0755 $(BUILD)/vxctl $(DESTDIR)$(BINDIR)/vxctl
	install -m 0644 docs/man/vxswitchd.8 docs/man/vxctl.8 $(DESTDIR)$(MANDIR)/man8/
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@SYSUSERSDIR@|$(SYSUSERSDIR)|g' \
	  contrib/vxswitchd.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/vxswitchd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/vxswitchd.service
	install -m 0644 contrib/vxswitch.sysusers $(DESTDIR)$(SYSUSERSDIR)/vxswitch.conf
	install -m 0644 contrib/vxswitchd.conf.example $(DESTDIR)$(DOCDIR)/vxswitchd.conf.example

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(shell find $(BUILD) build-asan build-tsan $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
