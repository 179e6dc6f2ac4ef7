/*
 * softdpu extensions to doca_dev.h: the emulated topology behind the device list, in
 * libdoca_common (docs/topology.md). DOCA 2.5 has no such functions: on real hardware these
 * details come from the system. The `softdpu devices` and `softdpu topology` commands use them.
 *
 * String getters copy a NUL-terminated value into the caller's buffer of `size` bytes; an absent
 * value (a function without a parent, a net representor's emulation, ...) is the empty string.
 * Errors: DOCA_ERROR_INVALID_VALUE for NULL arguments, an unknown attribute, or a buffer too
 * small for the value and its NUL (as doca_devinfo_get_iface_name).
 */
#ifndef SOFTDPU_TOPOLOGY_H_
#define SOFTDPU_TOPOLOGY_H_

#include <stddef.h>
#include <stdint.h>

#include "../doca_compat.h"
#include "../doca_dev.h"
#include "../doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Details of a local device (struct doca_devinfo) that doca_dev.h does not offer. */
enum softdpu_devinfo_attr {
	SOFTDPU_DEVINFO_NAME = 0,            /* topology name, e.g. "pf0vf1", "p0" */
	SOFTDPU_DEVINFO_FUNC_TYPE = 1,       /* "pf", "vf" or "sf" */
	SOFTDPU_DEVINFO_PARENT = 2,          /* name of the PF a VF/SF belongs to; "" for a PF */
	SOFTDPU_DEVINFO_VUID = 3,            /* vendor unique id */
	SOFTDPU_DEVINFO_LINK_LAYER = 4,      /* "ethernet" or "infiniband" */
	SOFTDPU_DEVINFO_DPU_MANAGER = 5,     /* host side: the DPU PF managing the function; "" on the DPU */
	SOFTDPU_DEVINFO_DPU_MANAGER_PCI = 6, /* ... and its PCI address ("XXXX:XX:XX.X"); "" on the DPU */
	SOFTDPU_DEVINFO_DPU_REPRESENTOR = 7, /* host side: the DPU's representor of the function; "" on the DPU */
};

/* Details of a representor (struct doca_devinfo_rep) that doca_dev.h does not offer. */
enum softdpu_devinfo_rep_attr {
	SOFTDPU_DEVINFO_REP_NAME = 0,       /* topology name, e.g. "hpf0vf0" */
	SOFTDPU_DEVINFO_REP_IFACE = 1,      /* representor netdev on the DPU, e.g. "pf0hpf"; may be "" */
	SOFTDPU_DEVINFO_REP_EMULATION = 2,  /* emulated device kind, e.g. "virtio-net"; "" for a net representor */
	SOFTDPU_DEVINFO_REP_REPRESENTS = 3, /* name of the represented function; "" when it has none */
	SOFTDPU_DEVINFO_REP_MEMORY = 4,     /* App Shield memory source "<kind>:<path>[,qmp=<socket>]" from the
					       topology; "" when it names none (SOFTDPU_APSH_MEMORY is not read) */
};

DOCA_EXPERIMENTAL
doca_error_t softdpu_devinfo_get_str(const struct doca_devinfo *devinfo, enum softdpu_devinfo_attr attr, char *value,
				     uint32_t size);
DOCA_EXPERIMENTAL
doca_error_t softdpu_devinfo_rep_get_str(const struct doca_devinfo_rep *devinfo_rep, enum softdpu_devinfo_rep_attr attr,
					 char *value, uint32_t size);

/* 0 when the topology marks the function unavailable (doca_dev_open then fails with
 * DOCA_ERROR_NOT_CONNECTED), 1 otherwise. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_devinfo_get_is_available(const struct doca_devinfo *devinfo, uint8_t *available);

/* The most devices one doca_mmap may hold when this device is among them. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_devinfo_get_mmap_max_num_devices(const struct doca_devinfo *devinfo, uint32_t *max_devices);

/* The topology this process sees: its source (a file path, or "<built-in>") and side ("host" or
 * "dpu", from SOFTDPU_SIDE); the strings stay valid for the life of the process. When the
 * topology cannot be loaded: DOCA_ERROR_NOT_FOUND (as doca_devinfo_create_list) with the reason
 * ("<file>: <json path>: <reason>") in *source and *side NULL, or DOCA_ERROR_NO_MEMORY.
 * INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_topology_get_current(const char **source, const char **side);

/* Counts of a valid topology file (docs/topology.md). */
struct softdpu_topology_counts {
	uint32_t host_functions;
	uint32_t dpu_functions;
	uint32_t representors;
};

/* Validates a topology file without using it. DOCA_SUCCESS with its counts; otherwise
 * DOCA_ERROR_INVALID_VALUE (NULL path or counts, a file that cannot be read or is not a valid
 * topology) or DOCA_ERROR_NO_MEMORY, with the reason ("<file>: <json path>: <reason>") in error
 * when error is not NULL (truncated to error_size bytes, NUL included). */
DOCA_EXPERIMENTAL
doca_error_t softdpu_topology_check_file(const char *path, struct softdpu_topology_counts *counts, char *error,
					 size_t error_size);

/* The built-in topology (used when SOFTDPU_TOPOLOGY is unset) as JSON text, NUL-terminated. */
DOCA_EXPERIMENTAL
const char *softdpu_topology_get_default_text(void);

/* Checks an App Shield memory source in the syntax of SOFTDPU_APSH_MEMORY and of the topology's
 * representor memory: "<kind>:<path>[,qmp=<socket>]", kind qemu (or qemu_shared_ram), raw, elf
 * (or elf_core), lime or auto, or a bare path (kind auto); or a running QEMU process:
 * "pid:<PID>", "qemu-name:<-name>" (or qemu_name) or "libvirt:<domain>", each with an optional
 * ",qmp=<socket>". DOCA_SUCCESS when well-formed (the file is not opened, the process not looked
 * for), with the file's path in path when path is not NULL (an empty string for the process
 * kinds; INVALID_VALUE when it does not fit in path_size bytes); DOCA_ERROR_INVALID_VALUE with the
 * reason in error (as above) otherwise. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_memory_source_check(const char *spec, char *path, size_t path_size, char *error,
					 size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_TOPOLOGY_H_ */
