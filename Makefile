# SPDX-License-Identifier: GPL-2.0
#
# zcdev: build against the running kernel, or KVER=<release> / KDIR=<dir>.
#
#   make                 build zcdev.ko
#   make check           the test lane: selftests in VMs on 6.1, 6.12, 7.x
#   make bench           the benchmarks (native when possible, else a VM)
#   make install         modules_install + depmod (DESTDIR, INSTALL_MOD_PATH)
#   make clean

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
SRC := $(CURDIR)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(SRC) modules

clean:
	$(MAKE) -C $(KDIR) M=$(SRC) clean 2>/dev/null || \
		rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers zcdev_probes.h
	$(MAKE) -C selftests clean
	$(MAKE) -C bench clean

check:
	scripts/check

bench:
	scripts/bench

.PHONY: all modules clean check bench
