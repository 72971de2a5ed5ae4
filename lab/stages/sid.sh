#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The early warning: zcdev built with W=1 against sid's newest
# linux-headers-amd64, in a sid root (lab/vm/setup.sh sid, made in the
# background since the setup stage together with the package stage's
# and the systemd stage's roots), so that a kernel API change fails here
# before users upgrade to it.  Says how sid's kernel compares with
# trixie-backports', and the date of sid as its mirror has it.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -e "${LANE_OUT:-}/sid-deb.started" ] || exit 0

if wait_job sid-deb; then
	result ok "lab: sid's newest headers, the package lane's bookworm and trixie roots and the systemd root ready"
else
	result fail "lab: sid's newest headers, the package lane's bookworm and trixie roots and the systemd root ready" \
		"$LANE_OUT/sid-deb.log"
	exit 1
fi
in_time "sid" || exit 1

# shellcheck disable=SC1090
. "$LAB/kernels/7/env"
newest=$KREL
# shellcheck disable=SC1090
. "$LAB/kernels/sid/env"
# the versions without Debian's suffix and flavour
a=${KREL%%[+-]*} b=${newest%%[+-]*}
if [ "$a" = "$b" ]; then
	echo "# sid's kernel $KREL is the same version as trixie-backports' $newest; built all the same"
elif [ "$(printf '%s\n' "$a" "$b" | sort -V | tail -1)" = "$b" ]; then
	echo "# sid's kernel $KREL is older than trixie-backports' $newest; built all the same"
else
	echo "# sid's kernel $KREL is newer than trixie-backports' $newest"
fi
sed -n 's/^Date: /# sid as its mirror has it, of /p' "$BROOT"/var/lib/apt/lists/*_sid_InRelease 2>/dev/null |
	head -1
if build sid "$LANE_OUT/sid/src" W=1; then
	result ok "sid (early warning): builds with W=1 against linux-headers-$KREL, no warnings"
else
	result fail "sid (early warning): builds with W=1 against linux-headers-$KREL, no warnings" \
		"$LANE_OUT/sid/src.log"
fi
exit $failed
