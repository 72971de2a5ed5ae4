#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each stock kernel's module, built with W=1 and with sparse, and its
# modinfo (lab/stages/kernels.sh -b): what the stages after it need of a
# kernel, long before its guest (the stage kernel:K) has run.

exec "$(dirname "$0")/kernels.sh" -b "$@"
