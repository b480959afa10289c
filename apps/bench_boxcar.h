/* transient-bench --detector boxcar (apps/bench_boxcar.c). */
#ifndef TRANSIENT_APPS_BENCH_BOXCAR_H
#define TRANSIENT_APPS_BENCH_BOXCAR_H

/* Run the boxcar benchmark with the whole command line; returns the exit status. */
int boxcar_bench_main(int argc, char **argv);

#endif /* TRANSIENT_APPS_BENCH_BOXCAR_H */
