/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' CSV: one schema for every writer (zcbench, clearbench)
 * and reader (plot.gp, plot.sh, targets.awk), which find the columns by
 * these names in the first line, never by their place:
 *
 *   test         the benchmark row (splice-null, clear, ...)
 *   size         pipe, buffer or call size in bytes
 *   threads      threads measured together
 *   device       the device or peer (zczero, zero, zeropatch, vmsplice, ...)
 *   bytes        bytes moved in all
 *   seconds      the time, all threads together (guest ns with -icount)
 *   gbps         10^9 bytes a second, or a status: absent, unsupported,
 *                skipped, error
 *   faults       mmap-touch: page faults of the touch
 *   anonhuge_kb  mmap-touch: the mapping's AnonHugePages
 *   verdict      empty, or a note why the figure is no verdict (-V)
 */
#ifndef CSV_H
#define CSV_H

#define CSV_HEADER "test,size,threads,device,bytes,seconds,gbps,faults,anonhuge_kb,verdict"

#endif /* CSV_H */
