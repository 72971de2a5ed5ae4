#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lane's first stage: the machine and the kernels.
#
# Installs what the lane needs and fetches each kernel of LANE_KERNELS
# (lab/vm/setup.sh, idempotent), one TAP line each; the kernel "user" is
# checked and made from ZCDEV_IMAGE, ZCDEV_IMAGE_KDIR and
# ZCDEV_IMAGE_BROOT first (lab/vm/user-kernel.sh).  Those ready are
# listed in LANE_OUT/ready.  Started in the background, for later stages
# (lab/stages/lib.sh: wait_job): the debug kernel's build ("debug-build",
# lab/vm/debug-kernel.sh), and, when all four stock kernels
# are ready, sid's newest headers, the package stage's roots and the
# systemd stage's ("sid-deb").  Last, one probe of the accelerator for
# every guest of the lane (lab/vm/accel.sh), kept in LANE_OUT/accel.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -n "$LANE_OUT" ] || { echo "setup: run by lab/check.sh" >&2; exit 2; }

# job NAME CMD...: CMD in the background, its output in LANE_OUT/NAME.log
# and its exit code in LANE_OUT/NAME.rc when it ends; at niceness 0, as
# the guests (lab/check.sh runs the stages at 10).
job() {
	local name=$1
	shift
	touch "$LANE_OUT/$name.started"
	(nice -n "$((-$(nice)))" "$@" >"$LANE_OUT/$name.log" 2>&1
	 echo $? >"$LANE_OUT/$name.rc") </dev/null >/dev/null 2>&1 &
}

echo "# setting up the lab in $LAB (idempotent)"
: >"$LANE_OUT/ready"
for k in $LANE_KERNELS; do
	log=$LANE_OUT/lab-$k.log
	if [ "$k" = debug ]; then
		job debug-build lab/vm/setup.sh debug
		echo "# the debug kernel: lab/vm/debug-kernel.sh in the background ($LANE_OUT/debug-build.log)"
		continue
	fi
	if [ "$k" = user ] &&
	   ! lab/vm/user-kernel.sh "${ZCDEV_IMAGE:-}" "${ZCDEV_IMAGE_KDIR:-}" \
		"${ZCDEV_IMAGE_BROOT:-}" >"$log" 2>&1; then
		result fail "lab: kernel user (IMAGE=, KDIR=) usable" "$log"
		continue
	fi
	if lab/vm/setup.sh "$k" >>"$log" 2>&1; then
		result ok "lab: kernel $k fetched and ready"
		lane_add ready "$k"
	else
		result fail "lab: kernel $k fetched and ready" "$log"
	fi
done
# sid's newest headers (the early warning), the package stage's roots and
# the systemd stage's need only the network and apt.
if lane_has ready 6.1 6.12 7 7-rt; then
	job sid-deb lab/vm/setup.sh sid deb systemd
fi

ZCDEV_ACCEL=$(lab/vm/accel.sh 2>"$LANE_OUT/accel.log")
echo "$ZCDEV_ACCEL" >"$LANE_OUT/accel"
echo "# accelerator: $(sed 's/^vm-accel: //' "$LANE_OUT/accel.log")"
exit $failed
