# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Runs as root inside the test VM (busybox sh), with /zcdev.ko,
# /guest-lib, the selftests in /t (zcdev_read, ..., their -m32 builds,
# zcdev_fuzz, and lane-list, the programs to run: lab/stages/selftests.sh)
# and stress-ng.  Prints its plan ("1..N", one for each step line below
# and each program of lane-list), then one TAP line per step: the
# selftests' own lines, then "ok - NAME" / "not ok - NAME" for the steps.
# lab/vm/judge.sh counts them against the plans and gates on the kernel
# log, which is never cleared.
#
# The fuzzers, trinity and zcdev_fuzz, run for ZCDEV_FUZZ seconds each
# (default 15 s; where ZCDEV_SCALE divides the selftests' counts, it
# divides this time too, to no less than 6 s), and the module is
# reloaded ZCDEV_RELOADS times at the end (default 10); stress-ng runs
# STRESS_OPS operations (2000), its mmap stressor on STRESS_MMAP (32M);
# ZCDEV_LIST names another list of programs than /t/lane-list
# (lab/guest/programs.sh runs the rest).  The kernel hands such a setting
# of its command line to init as an environment variable.  Where the
# kernel has kmemleak, its verdict is read while the module is loaded
# and after it is gone.

KO=/zcdev.ko
STRESS_OPS=${STRESS_OPS:-2000}
STRESS_MMAP=${STRESS_MMAP:-32M}
SCALE=${ZCDEV_SCALE:-1}	# as the selftests read it: 1 to 64
case $SCALE in *[!0-9]*) SCALE=1 ;; esac
[ "$SCALE" -ge 1 ] || SCALE=1
[ "$SCALE" -le 64 ] || SCALE=64
# scaled N MIN: N / SCALE, no less than MIN, as the selftests' scaled()
scaled() { echo $(($1 / SCALE < $2 ? $2 : $1 / SCALE)); }
FUZZ=${ZCDEV_FUZZ:-$(scaled 15 6)}
FUZZ_SEEDS=${ZCDEV_FUZZ_SEEDS:-"1 2 3"}
RELOADS=${ZCDEV_RELOADS:-10}
LIST=${ZCDEV_LIST:-/t/lane-list}

# step, kstep, report, unload, kmemleak_check, lane_programs and plan
# are in /guest-lib.

nodes_ok() {
	for d in zczero zcfull; do
		[ -c /dev/$d ] || return 1
		[ "$(stat -c %a /dev/$d)" = 666 ] || return 1
	done
}

refused() {		# refused CMD...: CMD fails with a message in the kernel log
	before=$(dmesg | wc -l)
	! "$@" && dmesg | tail -n +$((before + 1)) | grep "zcdev: $PARAM"
}

reads_zeros() {		# reads_zeros MIB: that many MiB of zeros, no more, no less
	[ "$(dd if=/dev/zczero bs=1M count="$1" 2>/dev/null | wc -c)" = $(($1 << 20)) ] &&
	[ "$(dd if=/dev/zczero bs=1M count="$1" 2>/dev/null | tr -d '\000' | wc -c)" = 0 ]
}

read_path_kernel() {
	echo kernel >/sys/module/zcdev/parameters/read_path &&
	reads_zeros 16 &&
	echo auto >/sys/module/zcdev/parameters/read_path
}

reload_loop() {
	i=0
	while [ $i -lt "$RELOADS" ]; do
		insmod $KO || return 1
		reads_zeros 1 || return 1
		stress --splice 1 --splice-ops 20 >/dev/null || return 1
		unload || return 1
		i=$((i + 1))
	done
}

stress() {		# stress ARGS...: stress-ng, the stock devices replaced by ours
	mount --bind /dev/zczero /dev/zero && mount --bind /dev/zcfull /dev/full || return 1
	cd /tmp && stress-ng --verify --metrics-brief --timeout 30 "$@" >/tmp/stress.out 2>&1
	rc=$?
	cd /
	umount /dev/zero
	umount /dev/full
	cat /tmp/stress.out
	grep -qi 'not splicing' /tmp/stress.out && return 1
	grep -q 'unsuccessful run' /tmp/stress.out && return 1
	return $rc
}

# trinity, a fuzzer nobody here wrote: as nobody, the devices its only
# files (-V), and only the system calls that reach them: never reboot,
# module or privileged calls, and the VM has no network.  Its seed is
# fixed; SIGINT ends it after $FUZZ s with its per-call statistics.
TRINITY_CALLS="read readv pread64 preadv preadv2 write writev pwrite64
	pwritev pwritev2 splice tee vmsplice sendfile copy_file_range mmap
	munmap mprotect madvise fcntl ioctl lseek io_uring_setup
	io_uring_enter io_uring_register"

trinity_run() {
	local d t=0 pid calls=

	mkdir -p /victims /tmp/trinity || return 1
	for d in zczero zcfull; do
		# shellcheck disable=SC2046 # major and minor: two words
		[ -e /victims/$d ] ||
			mknod -m 666 /victims/$d c $(tr : ' ' </sys/class/zcdev/$d/dev) ||
			return 1
	done
	chown 65534:65534 /tmp/trinity
	for d in $TRINITY_CALLS; do calls="$calls -c $d"; done
	(cd /tmp/trinity && exec /usr/bin/setpriv --reuid=65534 --regid=65534 \
		--clear-groups trinity -l off -V /victims -C 2 -s 1 --stats \
		--disable-fds=sockets,perf,epoll,eventfd,timerfd,drm $calls) \
		>/tmp/trinity.out 2>&1 &
	pid=$!
	while [ $t -lt "$FUZZ" ] && kill -0 $pid 2>/dev/null; do
		sleep 1
		t=$((t + 1))
		[ $((t % 5)) -ne 0 ] || echo "# trinity: $t s" >/dev/console
	done
	kill -INT $pid 2>/dev/null
	wait $pid
	# shellcheck disable=SC2046 # two numbers: two words
	set -- $(sed -n 's/.*(attempted:\([0-9]*\)\. success:\([0-9]*\)\..*/\1 \2/p' \
		/tmp/trinity.out | awk '{ a += $1; s += $2 } END { print a + 0, s + 0 }')
	report "trinity: $1 system calls on zczero and zcfull ($2 succeeded) in $t s, seed 1"
	tail -5 /tmp/trinity.out
	[ "$1" -gt 0 ] && reads_zeros 1
}

# zcdev_fuzz, ours: a fixed list of seeds, $FUZZ s in all.
fuzz_run() {
	local s rc=0 secs

	secs=$((FUZZ / $(echo $FUZZ_SEEDS | wc -w)))
	for s in $FUZZ_SEEDS; do
		ZCDEV_KO=$KO /t/zcdev_fuzz -s "$s" -t "$secs" >/tmp/fuzz.out 2>&1 || rc=1
		grep -v '^#' /tmp/fuzz.out | tail -1 | sed 's/^/# report: zcdev_fuzz: /' >/dev/console
		[ $rc -eq 0 ] || { cat /tmp/fuzz.out; return 1; }
	done
	lsmod | grep -q '^zcdev' || insmod $KO
}

. /guest-lib
echo "# kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
plan "$0" "$(wc -l <"$LIST")"
step "insmod zcdev.ko" insmod $KO
step "/dev/zczero and /dev/zcfull are 0666 character devices" nodes_ok

# The selftests: the programs lab/selftests/Makefile lists for the lane
# (emit_lane), or those of ZCDEV_LIST, one step each.
lane_programs "$LIST"

step "stress-ng zero" stress --zero 2 --zero-ops $STRESS_OPS
step "stress-ng full" stress --full 2 --full-ops $STRESS_OPS
step "stress-ng splice" stress --splice 2 --splice-ops $STRESS_OPS
# The dev stressor runs until its timeout whatever its ops, on two CPUs:
# ten seconds of it are enough (a ZCDEV_SCALE-th, 3 s at least).
step "stress-ng dev on zczero" stress --dev 1 --dev-file /dev/zczero \
	--timeout "$(scaled 10 3)"
step "stress-ng mmap" stress --mmap 1 --mmap-ops 4 --mmap-bytes $STRESS_MMAP
step "trinity, unprivileged, on the devices" trinity_run
step "zcdev_fuzz: seeds $FUZZ_SEEDS, no violations" fuzz_run
kstep "kmemleak: nothing of zcdev's leaked, module loaded" kmemleak_check loaded

PARAM=read_path
step "read_path=bogus is refused with a message" \
	refused sh -c 'echo bogus > /sys/module/zcdev/parameters/read_path'
PARAM=read_chunk
step "read_chunk=12 is refused with a message" \
	refused sh -c 'echo 12 > /sys/module/zcdev/parameters/read_chunk'
step "read_path=kernel reads zeros" read_path_kernel
step "rmmod" unload
PARAM=read_path
step "insmod read_path=bogus is refused with a message" refused insmod $KO read_path=bogus
PARAM=splice_buffer
step "insmod splice_buffer=12345 is refused with a message" \
	refused insmod $KO splice_buffer=12345
step "insmod, read, splice and rmmod $RELOADS times" reload_loop
step "no zcdev module left loaded" sh -c '! lsmod | grep -q "^zcdev"'
kstep "kmemleak: nothing of zcdev's leaked, module unloaded" kmemleak_check unloaded
