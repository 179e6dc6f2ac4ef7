/*
 * DPDK set-up shared by the DOCA DPDK bridge samples (dpdk_forwarder, dpdk_capture). Compiled only
 * into those samples: it needs DPDK (libdpdk).
 */
#ifndef DPDK_SAMPLE_COMMON_H_
#define DPDK_SAMPLE_COMMON_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

/*
 * A DPDK sample's command line: doca_argp_init(program, config), as the DPDK program rte_eal_init
 * with the arguments before "--", or, without any, a default that needs no hugepages, no PCI device
 * and no other DPDK process (the file prefix <program>_<pid>), register_flags(), doca_argp_start(argc, argv);
 * logs what failed. *argp_initialised tells whether doca_argp_init succeeded, so that
 * doca_argp_destroy is due, whatever the result.
 */
doca_error_t dpdk_sample_argp_start(const char *program, void *config, doca_error_t (*register_flags)(void), int argc,
				    char **argv, bool *argp_initialised);

/* Whether the DPDK program initialised the EAL (rte_eal_cleanup is then due). */
bool dpdk_sample_eal_initialised(void);

/*
 * After rte_eal_cleanup: removes the EAL's run-time directory when the default chose the
 * file prefix, so that runs leave nothing behind (DPDK 22.11 keeps it, and refuses --in-memory
 * with --no-huge). Does nothing otherwise.
 */
void dpdk_sample_remove_runtime_dir(void);

struct rte_mempool;

/*
 * Configures DPDK port port_id with one Rx queue (mbufs from pool) and one Tx queue, ring_size
 * descriptors each, on NUMA socket socket_id, and starts it: 0, or the first failing call's
 * (negative) DPDK error, which the caller reports.
 */
int dpdk_sample_start_port(uint16_t port_id, uint16_t ring_size, int socket_id, struct rte_mempool *pool);

#endif /* DPDK_SAMPLE_COMMON_H_ */
