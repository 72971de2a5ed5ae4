#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lint stage: checkpatch.pl --strict over the C files and shellcheck
# over the shell scripts (lab/lint.sh), clean; and a line of each kind
# that it must refuse, to prove it live.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
OUT=${LANE_OUT:-$PWD/out}/lint
mkdir -p "$OUT"

step "lint: checkpatch.pl --strict and shellcheck, no errors, warnings or checks" \
	"$OUT/tree.log" lab/lint.sh

printf '// SPDX-License-Identifier: GPL-2.0\nint planted(int a){ return a; }\n' \
	>"$OUT/planted.c"
printf '#!/bin/bash\nplanted= true\n' >"$OUT/planted.sh"
for f in planted.c planted.sh; do
	if lab/lint.sh "$OUT/$f" >"$OUT/$f.log" 2>&1; then
		result fail "gate: lint fails a planted style error ($f)" "$OUT/$f.log"
	else
		result ok "gate: lint fails a planted style error ($f)"
	fi
done
exit $failed
