/* transient-bench --detector spiir-triggers (apps/bench_spiir_triggers.c). */
#ifndef TRANSIENT_APPS_BENCH_SPIIR_TRIGGERS_H
#define TRANSIENT_APPS_BENCH_SPIIR_TRIGGERS_H

/* Entry point of the SPIIR trigger search benchmark; argv as given to
 * transient-bench. */
int spiir_triggers_bench_main(int argc, char **argv);

#endif /* TRANSIENT_APPS_BENCH_SPIIR_TRIGGERS_H */
