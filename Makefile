# SPDX-License-Identifier: GPL-2.0
#
# daptrace: the module for every supported kernel, the userspace tools, and
# the tests.  `make help` lists the targets.
#
#   make check        everything: setup, build, style, sparse, host + VM tests,
#                     the VM tests on the debug kernel too (CHECK_DEBUG=0: not)
#   make check-full   make check with every test on the 5-level-paging boot
#                     and on the debug kernel too (longer: README, "Tests")
#   make check-debug  only the VM tests on a debug kernel (KASAN, lockdep, kmemleak)
#   make check-exporter  the exporter in the VM scraped by a real Prometheus
#   make demo         the main job: record workloads in the VM, write heatmaps
#   make module KVER=6.12.117+deb12-amd64 (or KDIR=...)
#   make install      module for KVER + tools, library, man pages (PREFIX, DESTDIR)
#   make uninstall    removes exactly what install put there
#   make dkms-install the module through DKMS for every supported kernel
#   make deb          Debian packages into build/deb/ (daptrace, libdaptrace0,
#                     libdaptrace-dev, daptrace-dkms), checked with lintian

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD ?= $(TOP)/build
# One version for the CLI, the library, the DKMS and Debian packages.
VERSION := $(shell cat $(TOP)/VERSION)
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

# Supported kernels installed here, newest ABI of each series (never hard-coded);
# the newest one lives in a trixie root (scripts/trixie-root.sh).  DKMS and
# the packages build only for the host's own (HOST_KERNELS).
KERNELS ?= $(shell $(TOP)/scripts/kernels.sh)
HOST_KERNELS ?= $(shell $(TOP)/scripts/kernels.sh --host)
KVER ?= $(lastword $(HOST_KERNELS))
# KDIR=/path/to/build builds against any tree; by default scripts/kbuild.sh
# finds KVER's, in the trixie root if that is where it is.
KDIR ?=
KBUILD = $(if $(KDIR),$(MAKE) -C $(KDIR) M=$(1),$(TOP)/scripts/kbuild.sh $(KVER) $(1))
KMOD_DIR = $(BUILD)/kmod/$(KVER)
# Our own builds treat W=1 warnings as errors; DKMS builds do not.
WERROR ?= y
# DAPTRACE_DEBUG=y adds fault-injection parameters (harness self-tests).
DAPTRACE_DEBUG ?=

KSRC := Kbuild $(wildcard kernel/*.c kernel/*.h kernel/compat-include/linux/*.h \
	kernel/compat-include/linux/sched/*.h) \
	include/uapi/linux/daptrace.h
# Test-only helper modules for the VM selftests (never installed).
TESTMOD_SRC := $(wildcard selftests/vm/testmod/Kbuild selftests/vm/testmod/*.c)

# checkpatch.pl and the kselftest headers come from Debian's linux-source-6.12.
LINUX_SRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-6.12.tar.*))
LINUX_SRC := $(BUILD)/linux-src
KSFT_INC := $(BUILD)/kselftest
CHECKPATCH := $(LINUX_SRC)/scripts/checkpatch.pl

.PHONY: all help deps module ksrc modules-all userspace unit unit-run userspace-check \
	style shellcheck sparse check check-full check-vm check-debug check-exporter demo bench install \
	install-module install-tools uninstall uninstall-module uninstall-tools dkms-source dkms-install \
	dkms-uninstall dkms-test deb deb-test clean

all: modules-all userspace

help:
	@sed -n 's/^#   //p' Makefile
	@echo "targets: all deps module modules-all userspace unit style sparse check check-vm"
	@echo "         check-exporter"
	@echo "         check-debug demo bench install uninstall dkms-install dkms-uninstall"
	@echo "         dkms-test deb deb-test clean"

deps:
	@scripts/deps.sh

# Kbuild writes objects next to the sources, so each kernel gets its own copy
# of them (cp -p keeps timestamps: unchanged files are not rebuilt).
module:
	@test -n "$(KVER)" || { echo "no supported kernel installed: run 'make deps'" >&2; exit 1; }
	@mkdir -p $(KMOD_DIR)
	@cp -p --parents $(KSRC) $(KMOD_DIR)/
	$(call KBUILD,$(KMOD_DIR)) W=1 DAPTRACE_WERROR=$(WERROR) \
		DAPTRACE_DEBUG=$(DAPTRACE_DEBUG) modules
	@mkdir -p $(KMOD_DIR)/testmod
	@cp -p $(TESTMOD_SRC) $(KMOD_DIR)/testmod/
	$(call KBUILD,$(KMOD_DIR)/testmod) W=1 modules

# The module's sources, for scripts that build a copy of their own
# (scripts/unverified-test.sh): one list, this one.
ksrc:
	@echo $(KSRC)

modules-all:
	@for k in $(KERNELS); do $(MAKE) --no-print-directory module KVER=$$k || exit 1; done

$(LINUX_SRC)/.stamp:
	@test -n "$(LINUX_SRC_TAR)" || { echo "linux-source-6.12 missing: run 'make deps'" >&2; exit 1; }
	@mkdir -p $(LINUX_SRC)
	tar -xf $(LINUX_SRC_TAR) -C $(LINUX_SRC) --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/tools/testing/selftests/kselftest_harness.h'
	@mkdir -p $(KSFT_INC)
	@cp $(LINUX_SRC)/tools/testing/selftests/kselftest*.h $(KSFT_INC)/
	@touch $@

ksft-headers: $(LINUX_SRC)/.stamp

# The tools and the library need no kselftest headers; their tests do.
userspace:
	$(MAKE) -C userspace

unit: $(LINUX_SRC)/.stamp
	$(MAKE) -C tests/unit run KSFT_INC=$(KSFT_INC) O=$(BUILD)/unit

userspace-check: $(LINUX_SRC)/.stamp
	$(MAKE) -C userspace check KSFT_INC=$(KSFT_INC)

# checkpatch --strict on every kernel source and the uapi header.
style: $(LINUX_SRC)/.stamp
	perl $(CHECKPATCH) --no-tree --strict --quiet --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG \
		-f $(wildcard kernel/*.c kernel/*.h) include/uapi/linux/daptrace.h \
		$(filter %.c,$(TESTMOD_SRC))

# shellcheck on every shell script of the project: any warning fails.
shellcheck:
	@files=$$(git ls-files '*.sh' selftests/vm/init scripts bench demo | sort -u | \
		while read -r f; do [ -f "$$f" ] && head -n1 "$$f" | grep -qE '^#!.*(sh|bash)' && echo "$$f"; done); \
	shellcheck -S warning $$files && echo "shellcheck: $$(echo $$files | wc -w) scripts clean"

# sparse on every kernel: any warning fails, and so does a sparse the kernel's
# Makefile finds too old to run (it would skip the check and say so once).
sparse:
	@set -o pipefail; for k in $(KERNELS); do \
		d=$(BUILD)/sparse/$$k; mkdir -p $$d; cp -p --parents $(KSRC) $$d/; \
		$(TOP)/scripts/kbuild.sh $$k $$d -s C=2 W=1 modules 2>&1 | tee $$d/log || exit 1; \
		mkdir -p $$d/testmod; cp -p $(TESTMOD_SRC) $$d/testmod/; \
		$(TOP)/scripts/kbuild.sh $$k $$d/testmod -s C=2 W=1 modules 2>&1 | \
			tee -a $$d/log || exit 1; \
		if grep -E '(warning|error):|not available or not up to date' $$d/log; then \
			echo "sparse: $$k: not clean, or not run" >&2; exit 1; fi; \
		echo "sparse: $$k: clean"; \
	done

check:
	@scripts/check.sh

# make check, with every test on the 5-level-paging boot and the debug kernel.
check-full:
	@CHECK_FULL=1 scripts/check.sh

check-vm: modules-all
	selftests/vm/run.sh $(VMFLAGS)

# One boot with a NIC: the guest's exporter scraped by Prometheus on the host.
check-exporter: modules-all
	tests/exporter/prometheus.sh

# The VM tests on a KASAN/lockdep/kmemleak kernel (built once, cached).
check-debug:
	@scripts/check-debug.sh $(VMFLAGS)

demo:
	@scripts/demo.sh

bench:
	@bench/run.sh $(BENCHFLAGS) $(if $(T),--table $(T))

install: install-module install-tools

# The man pages' title lines get VERSION here (docs/man/ carries none).
install-tools:
	$(MAKE) -C userspace install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	@for m in $(MAN1) $(MAN3); do \
		d=$(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; echo "  MAN $$d"; \
		sed '/^\.TH /s/"daptrace"/"daptrace $(VERSION)"/' $$m > $$d && chmod 0644 $$d || exit 1; \
	done

install-module: module
	install -D -m 0644 $(KMOD_DIR)/daptrace.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/daptrace.ko
	test -n "$(DESTDIR)" || depmod -a $(KVER)

MAN1 := $(wildcard docs/man/*.1)
MAN3 := $(wildcard docs/man/*.3)

uninstall: uninstall-module uninstall-tools

uninstall-tools:
	$(MAKE) -C userspace uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3)))

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/daptrace.ko
	test -n "$(DESTDIR)" || depmod -a $(KVER)

# DKMS: the module is rebuilt automatically on kernel upgrades.  dkms.conf
# carries #MODULE_VERSION# (dh_dkms's placeholder), replaced here by VERSION.
DKMS_SRC := /usr/src/daptrace-$(VERSION)
dkms-source:
	rm -rf $(DESTDIR)$(DKMS_SRC)
	mkdir -p $(DESTDIR)$(DKMS_SRC)
	cp -p --parents $(KSRC) $(DESTDIR)$(DKMS_SRC)/
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DESTDIR)$(DKMS_SRC)/dkms.conf

# Fails unless the module was built and installed for every supported kernel
# (none installed is a failure too, not a silent success); a failure for one
# kernel undoes it all, so nothing half-installed stays registered.
dkms-install:
	@test -n "$(HOST_KERNELS)" || { echo "dkms-install: no supported kernel with headers" \
		"installed (scripts/kernels.sh found none): run 'make deps'" >&2; exit 1; }
	@command -v dkms >/dev/null || { echo "dkms-install: dkms missing: run 'make deps'" >&2; exit 1; }
	@if [ -n "$$(dkms status -m daptrace -v $(VERSION))" ]; then \
		echo "dkms-install: replacing the registered daptrace/$(VERSION)"; \
		dkms remove -m daptrace -v $(VERSION) --all || exit 1; fi
	$(MAKE) --no-print-directory dkms-source DESTDIR=
	dkms add -m daptrace -v $(VERSION)
	@for k in $(HOST_KERNELS); do \
		dkms install -m daptrace -v $(VERSION) -k $$k && \
		dkms status -m daptrace -v $(VERSION) -k $$k | grep -q ': installed' && continue; \
		tail -n 20 /var/lib/dkms/daptrace/$(VERSION)/build/make.log 2>/dev/null; \
		echo "dkms-install: daptrace/$(VERSION) could not be installed for $$k;" \
			"undoing the whole dkms-install" >&2; \
		$(MAKE) --no-print-directory dkms-uninstall >/dev/null; exit 1; \
	done
	@echo "dkms-install: daptrace/$(VERSION) installed for $(HOST_KERNELS)"
	@ko=$$(find /lib/modules/$(lastword $(HOST_KERNELS))/updates/dkms -name 'daptrace.ko*' | head -n1); \
	signer=$$(modinfo -F signer "$$ko" 2>/dev/null); \
	if [ -n "$$signer" ]; then \
		echo "dkms-install: signed by '$$signer' (/var/lib/dkms/mok.pub); with Secure Boot," \
			"enrol that key once: mokutil --import /var/lib/dkms/mok.pub, reboot, confirm it"; \
	else echo "dkms-install: the module is not signed: with Secure Boot it will not load" \
		"(DKMS signs with /var/lib/dkms/mok.key when its kbuild has sign-file)"; fi

dkms-uninstall:
	@if [ -n "$$(dkms status -m daptrace -v $(VERSION))" ]; then \
		dkms remove -m daptrace -v $(VERSION) --all || exit 1; \
	else echo "dkms-uninstall: daptrace/$(VERSION) is not registered with DKMS"; fi
	rm -rf $(DKMS_SRC)

dkms-test:
	@scripts/dkms-test.sh $(VERSION)

# Debian packages (debian/) built from a copy of the tree in build/deb/.
deb:
	@scripts/deb.sh build

# Builds the packages, installs them with dpkg, checks what lands where, purges.
deb-test:
	@scripts/deb.sh test

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C userspace clean
	-$(MAKE) -C tests/unit clean O=$(BUILD)/unit
