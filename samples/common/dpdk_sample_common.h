/*
 * DPDK set-up shared by the DOCA DPDK bridge samples (dpdk_forwarder, dpdk_capture). Compiled only
 * into those samples: it needs DPDK (libdpdk).
 */
#ifndef DPDK_SAMPLE_COMMON_H_
#define DPDK_SAMPLE_COMMON_H_

#include <stdbool.h>

#include <doca_error.h>

/*
 * rte_eal_init with the arguments before "--" (argc, argv as doca_argp passes them to its DPDK
 * program), or, without any, a default that needs no hugepages, no PCI device and no other DPDK
 * process: the file prefix <prefix_name>_<pid>, whose run-time directory
 * dpdk_sample_remove_runtime_dir removes.
 */
doca_error_t dpdk_sample_eal_init(int argc, char **argv, const char *prefix_name);

/* Whether dpdk_sample_eal_init initialised the EAL (rte_eal_cleanup is then due). */
bool dpdk_sample_eal_initialised(void);

/*
 * After rte_eal_cleanup: removes the EAL's run-time directory when dpdk_sample_eal_init chose the
 * file prefix, so that runs leave nothing behind (DPDK 22.11 keeps it, and refuses --in-memory
 * with --no-huge). Does nothing otherwise.
 */
void dpdk_sample_remove_runtime_dir(void);

#endif /* DPDK_SAMPLE_COMMON_H_ */
