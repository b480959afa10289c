/* transient-bench --detector kalman (apps/bench_kalman.c). */
#ifndef TRANSIENT_APPS_BENCH_KALMAN_H
#define TRANSIENT_APPS_BENCH_KALMAN_H

/* Entry point of the Kalman-bank benchmark; argv as given to transient-bench. */
int kalman_bench_main(int argc, char **argv);

#endif /* TRANSIENT_APPS_BENCH_KALMAN_H */
