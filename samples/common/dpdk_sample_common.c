/*
 * DPDK set-up shared by the DOCA DPDK bridge samples; see dpdk_sample_common.h.
 */
#define _GNU_SOURCE /* DPDK's headers use strnlen and friends */
#include "dpdk_sample_common.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <doca_argp.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(DPDK_SAMPLE_COMMON);

static bool eal_initialised;
/* The EAL's run-time directory when this program chose the file prefix. */
static char own_runtime_dir[PATH_MAX];
/* dpdk_sample_argp_start's program, the default file prefix's stem. */
static const char *argp_program;

/* rte_eal_init with argc, argv, or, when there are no EAL arguments, the default (file prefix
 * <prefix_name>_<pid>). */
static doca_error_t eal_init(int argc, char **argv, const char *prefix_name)
{
	char prefix[64];
	char *defaults[] = {
	    argv[0], "-l", "0", "--no-huge", "-m", "256", "--no-pci", "--no-telemetry", prefix, "--log-level=*:warning",
	    NULL};

	if (argc <= 1) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", prefix_name, (int)getpid());
		argc = (int)(sizeof(defaults) / sizeof(defaults[0])) - 1;
		argv = defaults;
	}
	if (rte_eal_init(argc, argv) < 0) {
		DOCA_LOG_ERR("rte_eal_init failed: %s", rte_strerror(rte_errno));
		return DOCA_ERROR_DRIVER;
	}
	eal_initialised = true;
	if (argv == defaults)
		snprintf(own_runtime_dir, sizeof(own_runtime_dir), "%s", rte_eal_get_runtime_dir());
	return DOCA_SUCCESS;
}

/* The DPDK program of dpdk_sample_argp_start. */
static doca_error_t argp_eal_init(int argc, char **argv)
{
	return eal_init(argc, argv, argp_program);
}

doca_error_t dpdk_sample_argp_start(const char *program, void *config, doca_error_t (*register_flags)(void), int argc,
				    char **argv, bool *argp_initialised)
{
	doca_error_t result;

	*argp_initialised = false;
	result = doca_argp_init(program, config);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to initialise the argument parser: %s", doca_error_get_descr(result));
		return result;
	}
	*argp_initialised = true;
	argp_program = program;
	doca_argp_set_dpdk_program(argp_eal_init);
	result = register_flags();
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to parse the command line: %s", doca_error_get_descr(result));
	return result;
}

bool dpdk_sample_eal_initialised(void)
{
	return eal_initialised;
}

/* Removes own_runtime_dir and the files in it (DPDK puts no directories there). */
void dpdk_sample_remove_runtime_dir(void)
{
	DIR *dir;
	struct dirent *entry;

	if (own_runtime_dir[0] == '\0')
		return;
	dir = opendir(own_runtime_dir);
	if (dir != NULL) {
		while ((entry = readdir(dir)) != NULL) {
			char path[PATH_MAX + 256];

			if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", own_runtime_dir, entry->d_name);
			unlink(path);
		}
		closedir(dir);
	}
	rmdir(own_runtime_dir);
}

int dpdk_sample_start_port(uint16_t port_id, uint16_t ring_size, int socket_id, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port_id, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port_id, 0, ring_size, (unsigned int)socket_id, NULL, pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port_id, 0, ring_size, (unsigned int)socket_id, NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port_id);
	return ret;
}
