# SPDX-License-Identifier: GPL-2.0
#
# zcdev: build against the running kernel, or KVER=<release> / KDIR=<dir>.
#
#   make                 build zcdev.ko
#   make check           the test lane: selftests in VMs on 6.1, 6.12, 7.x, 7.x-rt
#                        and a debug kernel; IMAGE=bzImage KDIR=tree: yours
#   make bench           the benchmarks (native when possible, else a VM)
#   make fuzz            zcdev_fuzz in a VM: SECONDS=300 SEED=... KERNEL=7
#   make install         modules_install + depmod (DESTDIR, INSTALL_MOD_PATH)
#   make install-autoload  load zcdev at boot (modules-load.d)
#   make uninstall       remove what install and install-autoload put in
#   make sign            sign zcdev.ko: SIGN_KEY=key SIGN_CERT=cert [SIGN_HASH=]
#   make dkms-install    put the source in /usr/src, dkms add/build/install
#   make dkms-remove     dkms remove --all, and the source in /usr/src
#   make clean

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
SRC := $(CURDIR)

all: modules

# What a user who goes wrong is told, in one line, before kbuild says
# something less helpful ("/lib/modules/<release>/build: No such file or
# directory. Stop."): the headers are missing, KDIR is not a kernel tree,
# or it is one that was never built (lab/stages/errors.sh).
need-kdir = \
	if [ ! -f $(KDIR)/Makefile ] && [ "$(origin KDIR)" = file ]; then \
		echo "zcdev: no headers for kernel $(KVER) ($(KDIR) is missing):" \
		     "install them (Debian: apt-get install linux-headers-$(KVER))," \
		     "or give KDIR=<kernel build tree> or KVER=<release>" >&2; exit 1; \
	elif [ ! -f $(KDIR)/Makefile ]; then \
		echo "zcdev: KDIR=$(KDIR) is not a kernel build tree (no Makefile):" \
		     "give KDIR=<kernel headers or build tree>, e.g. /lib/modules/<release>/build" >&2; \
		exit 1; \
	elif [ ! -f $(KDIR)/Module.symvers ]; then \
		echo "zcdev: KDIR=$(KDIR) is a kernel tree that was never built (no Module.symvers):" \
		     "build it first (make -C $(KDIR)), or give KDIR=<an installed kernel's" \
		     "headers>, e.g. /lib/modules/<release>/build" >&2; exit 1; \
	fi

modules:
	@$(need-kdir)
	$(MAKE) -C $(KDIR) M=$(SRC) modules

clean:
	$(MAKE) -C $(KDIR) M=$(SRC) clean 2>/dev/null || \
		rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers zcdev_probes.h
	$(MAKE) -C lab/selftests clean
	$(MAKE) -C lab/bench clean

# IMAGE=<bzImage> KDIR=<its build tree> [BROOT=<root of its compiler>]:
# the lane on a kernel of the user's (lab/vm/user-kernel.sh).
check:
	$(if $(IMAGE),ZCDEV_IMAGE='$(IMAGE)' ZCDEV_IMAGE_KDIR='$(KDIR)' \
		ZCDEV_IMAGE_BROOT='$(BROOT)') lab/check.sh $(KERNELS)

bench:
	lab/bench.sh

fuzz:
	lab/fuzz.sh $(if $(KERNEL),-k $(KERNEL)) $(if $(SEED),-s $(SEED)) \
		$(if $(SECONDS),-t $(SECONDS))

# The module's sources, without what a build generated: copied by
# "make sources DEST=dir" for the lab's per-kernel builds and for DKMS.
SOURCES = Kbuild VERSION compat/compat.h compat/probe.sh \
	$(filter-out zcdev_probes.h,$(wildcard zcdev_*.c zcdev_*.h))

sources:
	@[ -n "$(DEST)" ] || { echo "make sources: give DEST=dir" >&2; exit 1; }
	mkdir -p $(DEST)
	cp --parents $(SOURCES) $(DEST)

.PHONY: all modules clean check bench fuzz sources

# --- install, sign, DKMS ------------------------------------------------

# The release the module is for: the one KDIR was built as (its vermagic;
# Debian's include/config/kernel.release holds the upstream version).
KREL = $(or $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null),$(KVER))
# Where the module tree goes: DESTDIR and INSTALL_MOD_PATH both prefix it.
MODROOT = $(abspath $(DESTDIR)$(INSTALL_MOD_PATH))
INSTALL_MOD_DIR ?= updates
MODULES_LOAD_DIR ?= /etc/modules-load.d
# With CONFIG_MODULE_SIG_ALL, modules_install signs with the kernel's own
# key; distribution headers do not ship it, so do not try (make sign).
NO_KERNEL_SIGN = $(if $(wildcard $(KDIR)/certs/signing_key.x509),,CONFIG_MODULE_SIG_ALL=)
DEPMOD ?= depmod
# need-writable DIR: DIR, or the nearest directory above it that exists,
# must be writable (as root, or with DESTDIR= a staging root of one's own).
need-writable = d=$(1); while [ ! -e "$$d" ]; do d=$$(dirname "$$d"); done; \
	[ -w "$$d" ] || { echo "make $@: cannot write to $$d: run it as root" \
		"(sudo make $@), or give DESTDIR=<a staging directory>" >&2; exit 1; }

install: modules
	@$(call need-writable,$(MODROOT)/lib/modules/$(KREL))
	$(MAKE) -C $(KDIR) M=$(SRC) INSTALL_MOD_PATH=$(MODROOT) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) $(NO_KERNEL_SIGN) modules_install
	$(DEPMOD) -b $(or $(MODROOT),/) $(KREL)

install-autoload:
	@$(call need-writable,$(DESTDIR)$(MODULES_LOAD_DIR))
	mkdir -p $(DESTDIR)$(MODULES_LOAD_DIR)
	printf '# zcdev: /dev/zczero and /dev/zcfull at boot\nzcdev\n' \
		>$(DESTDIR)$(MODULES_LOAD_DIR)/zcdev.conf

uninstall:
	@$(call need-writable,$(MODROOT)/lib/modules/$(KREL))
	@$(call need-writable,$(DESTDIR)$(MODULES_LOAD_DIR))
	rm -f $(MODROOT)/lib/modules/$(KREL)/$(INSTALL_MOD_DIR)/zcdev.ko \
		$(MODROOT)/lib/modules/$(KREL)/$(INSTALL_MOD_DIR)/zcdev.ko.*
	rm -f $(DESTDIR)$(MODULES_LOAD_DIR)/zcdev.conf
	if [ -d $(MODROOT)/lib/modules/$(KREL) ]; then \
		$(DEPMOD) -b $(or $(MODROOT),/) $(KREL); fi

# Secure Boot: sign with a key of your own, enrolled with mokutil (README).
SIGN_HASH ?= sha256
SIGN_FILE ?= $(KDIR)/scripts/sign-file
SIGNED_MAGIC := ~Module signature appended~

need-sign-key = if [ -z "$(SIGN_KEY)" ] || [ -z "$(SIGN_CERT)" ]; then \
		echo "make sign: give the signing key and its certificate:" \
		     "make sign SIGN_KEY=key.priv SIGN_CERT=cert.der [SIGN_HASH=sha256]" >&2; \
		exit 1; fi

sign:
	@$(need-sign-key)
	@case "$(SIGN_KEY)" in pkcs11:*) ;; *) [ -r "$(SIGN_KEY)" ] || { \
		echo "make sign: cannot read the key SIGN_KEY=$(SIGN_KEY)" >&2; exit 1; } ;; esac
	@[ -r "$(SIGN_CERT)" ] || { \
		echo "make sign: cannot read the certificate SIGN_CERT=$(SIGN_CERT)" >&2; exit 1; }
	@[ -x "$(SIGN_FILE)" ] || { \
		echo "make sign: no $(SIGN_FILE): install the headers of $(KREL)" \
		     "(linux-headers-$(KREL)) or give SIGN_FILE=" >&2; exit 1; }
	@# sign-file appends: start again from an unsigned module.
	@if [ -f zcdev.ko ] && tail -c 28 zcdev.ko | grep -qF '$(SIGNED_MAGIC)'; then \
		rm -f zcdev.ko; fi
	$(MAKE) modules
	$(SIGN_FILE) $(SIGN_HASH) $(SIGN_KEY) $(SIGN_CERT) zcdev.ko
	@tail -c 28 zcdev.ko | grep -qF '$(SIGNED_MAGIC)' && \
		echo "zcdev.ko signed ($(SIGN_HASH)) with $(SIGN_CERT)"

# DKMS: the source goes to $(DKMS_SOURCE_TREE)/zcdev-$(DKMS_VERSION) with
# the version filled into dkms.conf (dkms-src, which honours DESTDIR for
# packaging); DKMS_FLAGS reach every dkms command (e.g. --dkmstree,
# --installtree, --no-depmod for a private tree).
DKMS ?= dkms
DKMS_VERSION ?= $(shell cat $(SRC)/VERSION)
DKMS_SOURCE_TREE ?= /usr/src
DKMS_SRC = $(DESTDIR)$(DKMS_SOURCE_TREE)/zcdev-$(DKMS_VERSION)
DKMS_FLAGS ?=
DKMS_ARGS = --sourcetree $(DKMS_SOURCE_TREE) $(DKMS_FLAGS)
# Remove zcdev/$(DKMS_VERSION) from DKMS if it is there.
dkms-forget = if [ -n "$$($(DKMS) status $(DKMS_ARGS) zcdev/$(DKMS_VERSION) 2>/dev/null)" ]; then \
		$(DKMS) remove $(DKMS_ARGS) zcdev/$(DKMS_VERSION) --all; fi

dkms-src:
	rm -rf $(DKMS_SRC)
	$(MAKE) sources DEST=$(DKMS_SRC)
	sed 's/#MODULE_VERSION#/$(DKMS_VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf

dkms-install:
	$(dkms-forget)
	$(MAKE) dkms-src DESTDIR=
	$(DKMS) add $(DKMS_ARGS) zcdev/$(DKMS_VERSION)
	$(DKMS) install $(DKMS_ARGS) zcdev/$(DKMS_VERSION) -k $(KREL) \
		--kernelsourcedir $(KDIR)

dkms-remove:
	$(dkms-forget)
	rm -rf $(DKMS_SOURCE_TREE)/zcdev-$(DKMS_VERSION)

.PHONY: install install-autoload uninstall sign dkms-src dkms-install dkms-remove
