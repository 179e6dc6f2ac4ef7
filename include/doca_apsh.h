/*
 * softdpu: DOCA App Shield (doca_apsh.h, DOCA 2.5), in libdoca_apsh (pkg-config doca-apsh).
 *
 * App Shield watches an operating system from outside, by reading its physical memory. In
 * softdpu the watched system is a Linux guest whose RAM is a file (a running QEMU guest's shared
 * memory backend, a raw image, a QEMU ELF core or a LiME file); the system's representor device
 * says which (docs/topology.md, docs/apsh.md).
 *
 * Flow: doca_apsh_create -> doca_apsh_dma_dev_set -> doca_apsh_start; doca_apsh_system_create ->
 * setters (OS type, symbol map, memory regions, kpgd file, representor) -> doca_apsh_system_start;
 * then the *_get queries. Each query returns a snapshot array that the caller frees with the
 * matching *_free; the values read through the typed *_info_get macros stay valid until then.
 *
 * softdpu extensions are in softdpu/apsh.h. Every function here is experimental in DOCA 2.5.
 */
#ifndef DOCA_APSH_H_
#define DOCA_APSH_H_

#include <stdint.h>

#include "doca_apsh_attr.h"
#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_apsh_ctx;
struct doca_apsh_system;
struct doca_apsh_process;
struct doca_apsh_thread;
struct doca_apsh_lib;
struct doca_apsh_vad;
struct doca_apsh_module;
struct doca_apsh_attestation;
struct doca_apsh_privilege;
struct doca_apsh_envar;
struct doca_apsh_handle;
struct doca_apsh_ldrmodule;
struct doca_apsh_injection_detect;
struct doca_apsh_sid;
struct doca_apsh_netscan;
struct doca_apsh_process_parameters;
struct doca_apsh_yara;
struct doca_apsh_container;

/* ---- App Shield context ---- */

/* NULL on failure. */
DOCA_EXPERIMENTAL
struct doca_apsh_ctx *doca_apsh_create(void);

/* Systems created from the context stay usable until they are destroyed themselves. */
DOCA_EXPERIMENTAL
void doca_apsh_destroy(struct doca_apsh_ctx *ctx);

/* Mandatory before doca_apsh_start. INVALID_VALUE; NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_dma_dev_set(struct doca_apsh_ctx *ctx, struct doca_dev *dma_dev);

/* INVALID_VALUE, also when no DMA device was set. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_start(struct doca_apsh_ctx *ctx);

/* ---- Systems ---- */

/* NULL on failure. */
DOCA_EXPERIMENTAL
struct doca_apsh_system *doca_apsh_system_create(struct doca_apsh_ctx *ctx);

/* Snapshots taken from the system stay valid until they are freed. */
DOCA_EXPERIMENTAL
void doca_apsh_system_destroy(struct doca_apsh_system *system);

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_os_symbol_map_set(struct doca_apsh_system *system, const char *system_os_symbol_map_path);

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_mem_region_set(struct doca_apsh_system *system, const char *system_mem_region_path);

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_kpgd_file_set(struct doca_apsh_system *system, const char *system_kpgd_file_path);

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_dev_set(struct doca_apsh_system *system, struct doca_dev_rep *dev);

/* DOCA_APSH_SYSTEM_WINDOWS is NOT_SUPPORTED in softdpu. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_os_type_set(struct doca_apsh_system *system, enum doca_apsh_system_os os_type);

/* (size % 4096 == 0) or (4096 % size == 0). Default 4096. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_set_scan_window_size(struct doca_apsh_system *system, uint32_t scan_window_size);

/* size % step == 0; set it after the size. Default 4096. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sys_set_scan_window_step(struct doca_apsh_system *system, uint32_t scan_window_step);

/* Use doca_apsh_sys_config(). */
DOCA_EXPERIMENTAL
doca_error_t __doca_apsh_sys_config(struct doca_apsh_system *system, enum doca_apsh_system_config_attr attr,
				    void *value);
#define doca_apsh_sys_config(system, attr, value) (__doca_apsh_sys_config(system, attr, (void *)((uintptr_t)value)))

/* INVALID_VALUE; INITIALIZATION when the system cannot be read (reason in the SDK log). */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_system_start(struct doca_apsh_system *system);

/* ---- Kernel modules ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_modules_get(struct doca_apsh_system *system, struct doca_apsh_module ***modules,
				   int *modules_size);
DOCA_EXPERIMENTAL
void doca_apsh_module_free(struct doca_apsh_module **modules);
DOCA_EXPERIMENTAL
const void *__doca_apsh_module_info_get(struct doca_apsh_module *module, enum doca_apsh_module_attr attr);
#define doca_apsh_module_info_get(module, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_module_info_get(module, attr))

/* ---- Processes ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_processes_get(struct doca_apsh_system *system, struct doca_apsh_process ***processes,
				     int *processes_size);
DOCA_EXPERIMENTAL
void doca_apsh_processes_free(struct doca_apsh_process **processes);
DOCA_EXPERIMENTAL
const void *__doca_apsh_process_info_get(struct doca_apsh_process *process, enum doca_apsh_process_attr attr);
#define doca_apsh_process_info_get(process, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_process_info_get(process, attr))

/* ---- Per-process queries ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_libs_get(struct doca_apsh_process *process, struct doca_apsh_lib ***libs, int *libs_size);
DOCA_EXPERIMENTAL
void doca_apsh_libs_free(struct doca_apsh_lib **libs);
DOCA_EXPERIMENTAL
const void *__doca_apsh_lib_info_get(struct doca_apsh_lib *lib, enum doca_apsh_lib_attr attr);
#define doca_apsh_lib_info_get(lib, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_lib_info_get(lib, attr))

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_threads_get(struct doca_apsh_process *process, struct doca_apsh_thread ***threads,
				   int *threads_size);
DOCA_EXPERIMENTAL
void doca_apsh_threads_free(struct doca_apsh_thread **threads);
DOCA_EXPERIMENTAL
const void *__doca_apsh_thread_info_get(struct doca_apsh_thread *thread, enum doca_apsh_thread_attr attr);
#define doca_apsh_thread_info_get(thread, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_thread_info_get(thread, attr))

DOCA_EXPERIMENTAL
doca_error_t doca_apsh_vads_get(struct doca_apsh_process *process, struct doca_apsh_vad ***vads, int *vads_size);
DOCA_EXPERIMENTAL
void doca_apsh_vads_free(struct doca_apsh_vad **vads);
DOCA_EXPERIMENTAL
const void *__doca_apsh_vad_info_get(struct doca_apsh_vad *vad, enum doca_apsh_vad_attr attr);
#define doca_apsh_vad_info_get(vad, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_vad_info_get(vad, attr))

/* exec_hash_map_path: a file written by softdpu-exec-hash-build-map (docs/apsh.md). */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_attestation_get(struct doca_apsh_process *process, const char *exec_hash_map_path,
				       struct doca_apsh_attestation ***attestation, int *attestation_size);
/* Replaces *attestation (freeing the old array) with a new snapshot of the same process. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_attst_refresh(struct doca_apsh_attestation ***attestation, int *attestation_size);
DOCA_EXPERIMENTAL
void doca_apsh_attestation_free(struct doca_apsh_attestation **attestation);
DOCA_EXPERIMENTAL
const void *__doca_apsh_attst_info_get(struct doca_apsh_attestation *attestation, enum doca_apsh_attestation_attr attr);
#define doca_apsh_attst_info_get(attestation, attr)                                                                    \
	((attr##_TYPE)(uintptr_t)__doca_apsh_attst_info_get(attestation, attr))

/* Windows only: NOT_SUPPORTED for Linux systems. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_privileges_get(struct doca_apsh_process *process, struct doca_apsh_privilege ***privileges,
				      int *privileges_size);
DOCA_EXPERIMENTAL
void doca_apsh_privileges_free(struct doca_apsh_privilege **privileges);
DOCA_EXPERIMENTAL
const void *__doca_apsh_privilege_info_get(struct doca_apsh_privilege *privilege, enum doca_apsh_privilege_attr attr);
#define doca_apsh_privilege_info_get(privilege, attr)                                                                  \
	((attr##_TYPE)(uintptr_t)__doca_apsh_privilege_info_get(privilege, attr))

/* Windows only in DOCA 2.5; softdpu supports it for Linux. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_envars_get(struct doca_apsh_process *process, struct doca_apsh_envar ***envars,
				  int *envars_size);
DOCA_EXPERIMENTAL
void doca_apsh_envars_free(struct doca_apsh_envar **envars);
DOCA_EXPERIMENTAL
const void *__doca_apsh_envar_info_get(struct doca_apsh_envar *envar, enum doca_apsh_envar_attr attr);
#define doca_apsh_envar_info_get(envar, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_envar_info_get(envar, attr))

/* Windows only: NOT_SUPPORTED for Linux systems. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_handles_get(struct doca_apsh_process *process, struct doca_apsh_handle ***handles,
				   int *handles_size);
DOCA_EXPERIMENTAL
void doca_apsh_handles_free(struct doca_apsh_handle **handles);
DOCA_EXPERIMENTAL
const void *__doca_apsh_handle_info_get(struct doca_apsh_handle *handle, enum doca_apsh_handle_attr attr);
#define doca_apsh_handle_info_get(handle, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_handle_info_get(handle, attr))

/* Windows only: NOT_SUPPORTED for Linux systems. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_ldrmodules_get(struct doca_apsh_process *process, struct doca_apsh_ldrmodule ***ldrmodules,
				      int *ldrmodules_size);
DOCA_EXPERIMENTAL
void doca_apsh_ldrmodules_free(struct doca_apsh_ldrmodule **ldrmodules);
DOCA_EXPERIMENTAL
const void *__doca_apsh_ldrmodule_info_get(struct doca_apsh_ldrmodule *ldrmodule, enum doca_apsh_ldrmodule_attr attr);
#define doca_apsh_ldrmodule_info_get(ldrmodule, attr)                                                                  \
	((attr##_TYPE)(uintptr_t)__doca_apsh_ldrmodule_info_get(ldrmodule, attr))

/* Windows only in DOCA 2.5; softdpu supports it for Linux. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_injection_detect_get(struct doca_apsh_process *process,
					    struct doca_apsh_injection_detect ***suspected_injections,
					    int *suspected_injections_size);
DOCA_EXPERIMENTAL
void doca_apsh_injection_detect_free(struct doca_apsh_injection_detect **suspected_injections);
DOCA_EXPERIMENTAL
const void *__doca_apsh_injection_detect_info_get(struct doca_apsh_injection_detect *suspected_injection,
						  enum doca_apsh_injection_detect_attr attr);
#define doca_apsh_injection_detect_info_get(suspected_injection, attr)                                                 \
	((attr##_TYPE)(uintptr_t)__doca_apsh_injection_detect_info_get(suspected_injection, attr))

/* Windows only: NOT_SUPPORTED for Linux systems. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_sids_get(struct doca_apsh_process *process, struct doca_apsh_sid ***sids, int *sids_size);
DOCA_EXPERIMENTAL
void doca_apsh_sids_free(struct doca_apsh_sid **sids);
DOCA_EXPERIMENTAL
const void *__doca_apsh_sid_info_get(struct doca_apsh_sid *sid, enum doca_apsh_sid_attr attr);
#define doca_apsh_sid_info_get(sid, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_sid_info_get(sid, attr))

/* Windows 10 only in DOCA 2.5; softdpu supports it for Linux (TCP and UDP, IPv4 and IPv6). */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_netscan_get(struct doca_apsh_system *system, struct doca_apsh_netscan ***connections,
				   int *connections_size);
DOCA_EXPERIMENTAL
void doca_apsh_netscan_free(struct doca_apsh_netscan **connections);
DOCA_EXPERIMENTAL
const void *__doca_apsh_netscan_info_get(struct doca_apsh_netscan *connection, enum doca_apsh_netscan_attr attr);
#define doca_apsh_netscan_info_get(connection, attr)                                                                   \
	((attr##_TYPE)(uintptr_t)__doca_apsh_netscan_info_get(connection, attr))

/* Windows only in DOCA 2.5; softdpu supports it for Linux. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_process_parameters_get(struct doca_apsh_process *process,
					      struct doca_apsh_process_parameters **process_parameters);
DOCA_EXPERIMENTAL
void doca_apsh_process_parameters_free(struct doca_apsh_process_parameters *process_parameters);
DOCA_EXPERIMENTAL
const void *__doca_apsh_process_parameters_info_get(struct doca_apsh_process_parameters *process_parameters,
						    enum doca_apsh_process_parameters_attr attr);
#define doca_apsh_process_parameters_info_get(process_parameters, attr)                                                \
	((attr##_TYPE)(uintptr_t)__doca_apsh_process_parameters_info_get(process_parameters, attr))

/* Scans the process's memory areas (scan_type: enum doca_apsh_yara_scan_type bits) in windows of
 * the system's scan window size, moved by its step. Windows only in DOCA 2.5; softdpu supports
 * it for Linux. More rules: softdpu/apsh.h. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_yara_get(struct doca_apsh_process *process, enum doca_apsh_yara_rule *yara_rules_arr,
				uint32_t yara_rules_arr_size, uint64_t scan_type, struct doca_apsh_yara ***yara_matches,
				int *yara_matches_size);
DOCA_EXPERIMENTAL
void doca_apsh_yara_free(struct doca_apsh_yara **yara_matches);
DOCA_EXPERIMENTAL
const void *__doca_apsh_yara_info_get(struct doca_apsh_yara *yara, enum doca_apsh_yara_attr attr);
#define doca_apsh_yara_info_get(yara, attr) ((attr##_TYPE)(uintptr_t)__doca_apsh_yara_info_get(yara, attr))

/* Containers (added after DOCA 2.5, under the names later DOCA releases give them): the
 * processes of the system grouped by container, by the container ID the runtime put in the
 * cgroup path, else by the namespaces they do not share with the host (docs/apsh.md). An empty
 * array (NULL, size 0) when no process is in a container. NOT_SUPPORTED when the kernel's BTF
 * lacks the namespace structures; other errors as doca_apsh_processes_get. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_containers_get(struct doca_apsh_system *system, struct doca_apsh_container ***containers,
				      int *containers_size);
DOCA_EXPERIMENTAL
void doca_apsh_containers_free(struct doca_apsh_container **containers);
DOCA_EXPERIMENTAL
const void *__doca_apsh_container_info_get(struct doca_apsh_container *container, enum doca_apsh_container_attr attr);
#define doca_apsh_container_info_get(container, attr)                                                                  \
	((attr##_TYPE)(uintptr_t)__doca_apsh_container_info_get(container, attr))
/* The container's processes as doca_apsh_containers_get found them; freed with
 * doca_apsh_processes_free, usable with every process query. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_container_processes_get(struct doca_apsh_container *container,
					       struct doca_apsh_process ***processes, int *processes_size);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_APSH_H_ */
