# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the kernel log must never say, as an extended regular expression:
# sourced by lab/vm/judge.sh and scripts/lane-lib.  Lockdep's reports are
# named one by one: the debug kernel says "RCU lockdep checking is
# enabled" at every boot.

# shellcheck disable=SC2034	# read by the scripts that source this
BAD_LOG='WARNING:|BUG:|kernel BUG at|Oops|refcount_t:|list_add corruption|list_del corruption|Bad page|bad page state|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|bad unlock balance|held lock freed|leaked lock|INFO: trying to register non-static key|turning off the locking correctness validator|sleeping function called from invalid context|ODEBUG:|Call Trace:|general protection fault|UBSAN|KASAN|self-detected stall|rcu_.*detected stall|blocked for more than|soft lockup|hard LOCKUP|Kernel panic'
