# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The systemd stage's guest (lab/stages/systemd.sh): run by a unit of the
# lab's after multi-user.target, in a bookworm root booted with systemd as
# its init, with lab/guest/lib.sh as /usr/lib/lab/guest-lib.  The caller
# puts a line before it that sets BOOT (installed: after "make install
# install-autoload"; uninstalled: after "make uninstall"), KREL, V and
# SRCV (the installed build's version and srcversion).  One TAP line per
# step, "ok - systemd: ..." / "not ok - systemd: ...".

. /usr/lib/lab/guest-lib

# none of zcdev's units, nor systemd-modules-load, failed
none_failed() {
	systemctl --failed --no-legend --plain --no-pager | tee /tmp/failed
	! grep -E 'zcdev|modules-load' /tmp/failed
}
# what systemd-modules-load said (it exited before journald knew its unit)
# and what it loaded
loaded() {
	journalctl -b -o cat --no-pager -t systemd-modules-load | tee /tmp/said
	grep '^zcdev ' /proc/modules &&
	echo "version $(cat /sys/module/zcdev/version)," \
	     "srcversion $(cat /sys/module/zcdev/srcversion)" &&
	[ "$(cat /sys/module/zcdev/version)" = "$V" ] &&
	[ "$(cat /sys/module/zcdev/srcversion)" = "$SRCV" ] &&
	grep -qx "Inserted module 'zcdev'" /tmp/said
}
# what the unit ordered After=systemd-modules-load.service saw
early() {
	cat /run/lab-early
	grep -qx 'exit 0' /run/lab-early &&
	grep -q '^c.* /dev/zczero$' /run/lab-early && grep -q '^c.* /dev/zcfull$' /run/lab-early
}
zeros() {
	[ "$(dd if=/dev/zczero bs=1M count=16 2>/dev/null | wc -c)" = 16777216 ] &&
	[ "$(dd if=/dev/zczero bs=1M count=16 2>/dev/null | tr -d '\000' | wc -c)" = 0 ] &&
	[ "$(dd if=/dev/zcfull bs=4096 count=4 2>/dev/null | tr -d '\000' | wc -c)" = 0 ]
}
gone() {
	find / \( -path /proc -o -path /sys \) -prune -o -name 'zcdev*' -print | tee /tmp/found
	[ ! -s /tmp/found ] && ! grep '^zcdev ' /proc/modules && [ ! -e /dev/zczero ]
}

echo "# kernel $(uname -r), $(systemctl --version | head -1), up $(cut -d' ' -f1 /proc/uptime) s"
systemctl --failed --no-legend --plain --no-pager | sed 's/^/# failed: /'
if [ "$BOOT" = installed ]; then
	step "systemd: zcdev loaded at boot by systemd-modules-load: the installed build (version $V, srcversion $SRCV)" loaded
	step "systemd: /dev/zczero and /dev/zcfull exist when a unit ordered After=systemd-modules-load.service runs" early
	step "systemd: /dev/zczero and /dev/zcfull read zeros" zeros
else
	step "systemd: after make uninstall, zcdev is gone at the next boot: not loaded, no zcdev.ko, no modules-load.d entry" gone
fi
step "systemd: nothing of zcdev's, nor systemd-modules-load.service, in systemctl --failed" none_failed
