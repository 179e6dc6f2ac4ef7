/*
 * softdpu: DOCA App Shield attributes (doca_apsh_attr.h, DOCA 2.5), in libdoca_apsh.
 *
 * The enums name what can be asked of each App Shield object with the typed
 * doca_apsh_*_info_get() macros of doca_apsh.h, and what can be configured on a system with
 * doca_apsh_sys_config(). Every attribute ATTR has a type ATTR_TYPE: the macros cast the value
 * returned by the __doca_apsh_*_info_get() functions to it. String values point into the snapshot
 * and stay valid until the array they came from is freed.
 *
 * Attributes named *_WINDOWS_* apply to Windows systems only; *_LINUX_* to Linux systems only.
 */
#ifndef DOCA_APSH_ATTR_H_
#define DOCA_APSH_ATTR_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_dev_rep;

/* System configuration (doca_apsh_sys_config). */
enum doca_apsh_system_config_attr {
	DOCA_APSH_OS_SYMBOL_MAP = 0,         /* path of the OS symbol map */
	DOCA_APSH_MEM_REGION = 1,            /* path of the memory regions file */
	DOCA_APSH_KPGD_FILE = 2,             /* path of the kpgd file */
	DOCA_APSH_VHCA_ID = 3,               /* the system's representor device */
	DOCA_APSH_OS_TYPE = 4,               /* enum doca_apsh_system_os */
	DOCA_APSH_SCAN_WIN_SIZE = 5,         /* YARA scan window size, bytes */
	DOCA_APSH_SCAN_WIN_STEP = 6,         /* YARA scan window step, bytes */
	DOCA_APSH_HASHTEST_LIMIT = 7,        /* most memory areas attested per process */
	DOCA_APSH_MODULES_LIMIT = 8,         /* most kernel modules listed */
	DOCA_APSH_PROCESS_LIMIT = 9,         /* most processes listed */
	DOCA_APSH_THREADS_LIMIT = 10,        /* most threads listed per process */
	DOCA_APSH_LDRMODULES_LIMIT = 11,     /* most LDR modules listed per process (Windows) */
	DOCA_APSH_LIBS_LIMIT = 12,           /* most libraries listed per process */
	DOCA_APSH_VADS_LIMIT = 13,           /* most memory areas listed per process */
	DOCA_APSH_WINDOWS_ENVARS_LIMIT = 14, /* length limit of a Windows environment block */
	DOCA_APSH_HANDLES_LIMIT = 15,        /* most handles listed per process (Windows) */
	DOCA_APSH_STRING_LIMIT = 16,         /* longest string read from the system, bytes */
};

enum doca_apsh_system_os {
	DOCA_APSH_SYSTEM_LINUX = 0,
	DOCA_APSH_SYSTEM_WINDOWS = 1,
};

typedef char *DOCA_APSH_OS_SYMBOL_MAP_TYPE;
typedef char *DOCA_APSH_MEM_REGION_TYPE;
typedef char *DOCA_APSH_KPGD_FILE_TYPE;
typedef struct doca_dev_rep *DOCA_APSH_VHCA_ID_TYPE;
typedef enum doca_apsh_system_os DOCA_APSH_OS_TYPE_TYPE;
typedef uint32_t DOCA_APSH_SCAN_WIN_SIZE_TYPE;
typedef uint32_t DOCA_APSH_SCAN_WIN_STEP_TYPE;
typedef int DOCA_APSH_HASHTEST_LIMIT_TYPE;
typedef int DOCA_APSH_MODULES_LIMIT_TYPE;
typedef int DOCA_APSH_PROCESS_LIMIT_TYPE;
typedef int DOCA_APSH_THREADS_LIMIT_TYPE;
typedef int DOCA_APSH_LIBS_LIMIT_TYPE;
typedef int DOCA_APSH_VADS_LIMIT_TYPE;
typedef int DOCA_APSH_WINDOWS_ENVARS_LIMIT_TYPE;
typedef int DOCA_APSH_STRING_LIMIT_TYPE;
typedef struct doca_dev *DOCA_APSH_DMA_DEV_TYPE;

/* Processes. */
enum doca_apsh_process_attr {
	DOCA_APSH_PROCESS_PID = 0,
	DOCA_APSH_PROCESS_PPID = 1,
	DOCA_APSH_PROCESS_COMM = 2,
	DOCA_APSH_PROCESS_CPU_TIME = 3, /* picoseconds */
	DOCA_APSH_PROCESS_WINDOWS_OFFSET = 1000,
	DOCA_APSH_PROCESS_WINDOWS_THREADS = 1001,
	DOCA_APSH_PROCESS_WINDOWS_EXIT_TIME = 1002,
	DOCA_APSH_PROCESS_LINUX_GID = 2000,
	DOCA_APSH_PROCESS_LINUX_UID = 2001,
	DOCA_APSH_PROCESS_LINUX_STATE = 2002,
	/* Added after DOCA 2.5, under the names and values later DOCA releases give them: the inode
	 * numbers of the process's namespaces, as /proc/PID/ns/{pid,mnt,net} link to them. */
	DOCA_APSH_PROCESS_LINUX_NS_PID = 2003,
	DOCA_APSH_PROCESS_LINUX_NS_MNT = 2004,
	DOCA_APSH_PROCESS_LINUX_NS_NET = 2005,
};

typedef uint32_t DOCA_APSH_PROCESS_PID_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_PPID_TYPE;
typedef const char *DOCA_APSH_PROCESS_COMM_TYPE;
typedef uint64_t DOCA_APSH_PROCESS_CPU_TIME_TYPE;
typedef uint64_t DOCA_APSH_PROCESS_WINDOWS_OFFSET_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_WINDOWS_THREADS_TYPE;
typedef uint64_t DOCA_APSH_PROCESS_WINDOWS_EXIT_TIME_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_LINUX_GID_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_LINUX_UID_TYPE;
typedef uint64_t DOCA_APSH_PROCESS_LINUX_STATE_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_LINUX_NS_PID_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_LINUX_NS_MNT_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_LINUX_NS_NET_TYPE;

/* Threads. */
enum doca_apsh_thread_attr {
	DOCA_APSH_THREAD_PID = 0,
	DOCA_APSH_THREAD_TID = 1,
	DOCA_APSH_THREAD_STATE = 2,
	DOCA_APSH_THREAD_WINDOWS_WAIT_REASON = 1000,
	DOCA_APSH_THREAD_WINDOWS_OFFSET = 1001,
	DOCA_APSH_THREAD_WINDOWS_SUSPEND_COUNT = 1002,
	DOCA_APSH_THREAD_LINUX_PROC_NAME = 2000,
	DOCA_APSH_THREAD_LINUX_THREAD_NAME = 2001,
};

typedef uint32_t DOCA_APSH_THREAD_PID_TYPE;
typedef uint32_t DOCA_APSH_THREAD_TID_TYPE;
typedef uint64_t DOCA_APSH_THREAD_STATE_TYPE;
typedef uint8_t DOCA_APSH_THREAD_WINDOWS_WAIT_REASON_TYPE;
typedef uint64_t DOCA_APSH_THREAD_WINDOWS_OFFSET_TYPE;
typedef uint8_t DOCA_APSH_THREAD_WINDOWS_SUSPEND_COUNT_TYPE;
typedef const char *DOCA_APSH_THREAD_LINUX_PROC_NAME_TYPE;
typedef const char *DOCA_APSH_THREAD_LINUX_THREAD_NAME_TYPE;

/* Loaded libraries. */
enum doca_apsh_lib_attr {
	DOCA_APSH_LIB_PID = 0,
	DOCA_APSH_LIB_LIBRARY_PATH = 2,
	DOCA_APSH_LIB_LOAD_ADRESS = 3,
	DOCA_APSH_LIB_WINDOWS_DLL_NAME = 1000,
	DOCA_APSH_LIB_WINDOWS_SIZE_OF_IMAGE = 1001,
	DOCA_APSH_LIB_LINUX_LOAD_ADRESS = 2000, /* kept for compatibility: DOCA_APSH_LIB_LOAD_ADRESS */
};

typedef uint32_t DOCA_APSH_LIB_PID_TYPE;
typedef const char *DOCA_APSH_LIB_LIBRARY_PATH_TYPE;
typedef uint64_t DOCA_APSH_LIB_LOAD_ADRESS_TYPE;
typedef const char *DOCA_APSH_LIB_WINDOWS_DLL_NAME_TYPE;
typedef uint32_t DOCA_APSH_LIB_WINDOWS_SIZE_OF_IMAGE_TYPE;
typedef uint64_t DOCA_APSH_LIB_LINUX_LOAD_ADRESS_TYPE;

/* Memory areas (VADs on Windows, VMAs on Linux). */
enum doca_apsh_vad_attr {
	DOCA_APSH_VMA_PID = 0,
	DOCA_APSH_VMA_OFFSET = 1,
	DOCA_APSH_VMA_PROTECTION = 2,
	DOCA_APSH_VMA_VM_START = 3,
	DOCA_APSH_VMA_VM_END = 4,
	DOCA_APSH_VMA_PROCESS_NAME = 5,
	DOCA_APSH_VMA_FILE_PATH = 6,
	DOCA_APSH_VMA_WINDOWS_COMMIT_CHARGE = 1000,
	DOCA_APSH_VMA_WINDOWS_PRIVATE_MEMORY = 1001,
	DOCA_APSH_VMA_WINDOWS_TAG = 1002,
};

typedef uint32_t DOCA_APSH_VMA_PID_TYPE;
typedef uint64_t DOCA_APSH_VMA_OFFSET_TYPE;
typedef const char *DOCA_APSH_VMA_PROTECTION_TYPE;
typedef uint64_t DOCA_APSH_VMA_VM_START_TYPE;
typedef uint64_t DOCA_APSH_VMA_VM_END_TYPE;
typedef const char *DOCA_APSH_VMA_PROCESS_NAME_TYPE;
typedef const char *DOCA_APSH_VMA_FILE_PATH_TYPE;
typedef uint32_t DOCA_APSH_VMA_WINDOWS_COMMIT_CHARGE_TYPE;
typedef uint32_t DOCA_APSH_VMA_WINDOWS_PRIVATE_MEMORY_TYPE;
typedef const char *DOCA_APSH_VMA_WINDOWS_TAG_TYPE;

/* Attestation of a process's executable memory areas. */
enum doca_apsh_attestation_attr {
	DOCA_APSH_ATTESTATION_PID = 0,
	DOCA_APSH_ATTESTATION_COMM = 1,
	DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA = 2,
	DOCA_APSH_ATTESTATION_PROTECTION = 3,
	DOCA_APSH_ATTESTATION_START_ADDRESS = 4,
	DOCA_APSH_ATTESTATION_END_ADDRESS = 5,
	DOCA_APSH_ATTESTATION_PAGES_NUMBER = 6,         /* pages of the area in the binary file */
	DOCA_APSH_ATTESTATION_PAGES_PRESENT = 7,        /* pages present in memory */
	DOCA_APSH_ATTESTATION_MATCHING_HASHES = 8,      /* present pages whose hash matches the file's */
	DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT = 9, /* the hash map holds the area's file */
};

typedef uint32_t DOCA_APSH_ATTESTATION_PID_TYPE;
typedef const char *DOCA_APSH_ATTESTATION_COMM_TYPE;
typedef const char *DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA_TYPE;
typedef const char *DOCA_APSH_ATTESTATION_PROTECTION_TYPE;
typedef uint64_t DOCA_APSH_ATTESTATION_START_ADDRESS_TYPE;
typedef uint64_t DOCA_APSH_ATTESTATION_END_ADDRESS_TYPE;
typedef int DOCA_APSH_ATTESTATION_PAGES_NUMBER_TYPE;
typedef int DOCA_APSH_ATTESTATION_PAGES_PRESENT_TYPE;
typedef int DOCA_APSH_ATTESTATION_MATCHING_HASHES_TYPE;
typedef bool DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT_TYPE;

/* Kernel modules. */
enum doca_apsh_module_attr {
	DOCA_APSH_MODULES_OFFSET = 0,
	DOCA_APSH_MODULES_NAME = 1,
	DOCA_APSH_MODULES_SIZE = 2,
};

typedef uint64_t DOCA_APSH_MODULES_OFFSET_TYPE;
typedef const char *DOCA_APSH_MODULES_NAME_TYPE;
typedef uint32_t DOCA_APSH_MODULES_SIZE_TYPE;

/* Privileges (Windows). */
enum doca_apsh_privilege_attr {
	DOCA_APSH_PRIVILEGES_PID = 0,
	DOCA_APSH_PRIVILEGES_NAME = 2,
	DOCA_APSH_PRIVILEGES_IS_ON = 3,
	DOCA_APSH_PRIVILEGES_WINDOWS_PRESENT = 1000,
	DOCA_APSH_PRIVILEGES_WINDOWS_ENABLED = 1001,
	DOCA_APSH_PRIVILEGES_WINDOWS_DEFAULT = 1002,
};

typedef uint32_t DOCA_APSH_PRIVILEGES_PID_TYPE;
typedef const char *DOCA_APSH_PRIVILEGES_NAME_TYPE;
typedef bool DOCA_APSH_PRIVILEGES_IS_ON_TYPE;
typedef bool DOCA_APSH_PRIVILEGES_WINDOWS_PRESENT_TYPE;
typedef bool DOCA_APSH_PRIVILEGES_WINDOWS_ENABLED_TYPE;
typedef bool DOCA_APSH_PRIVILEGES_WINDOWS_DEFAULT_TYPE;

/* Environment variables. */
enum doca_apsh_envar_attr {
	DOCA_APSH_ENVARS_PID = 0,
	DOCA_APSH_ENVARS_VARIABLE = 2,
	DOCA_APSH_ENVARS_VALUE = 3,
	DOCA_APSH_ENVARS_WINDOWS_BLOCK = 1000,
};

typedef uint32_t DOCA_APSH_ENVARS_PID_TYPE;
typedef const char *DOCA_APSH_ENVARS_VARIABLE_TYPE;
typedef const char *DOCA_APSH_ENVARS_VALUE_TYPE;
typedef uint64_t DOCA_APSH_ENVARS_WINDOWS_BLOCK_TYPE;

/* Handles (Windows). */
enum doca_apsh_handle_attr {
	DOCA_APSH_HANDLE_PID = 0,
	DOCA_APSH_HANDLE_VALUE = 2,
	DOCA_APSH_HANDLE_TABLE_ENTRY = 3,
	DOCA_APSH_HANDLE_TYPE = 4,
	DOCA_APSH_HANDLE_ACCESS = 5,
	DOCA_APSH_HANDLE_NAME = 6,
};

typedef uint32_t DOCA_APSH_HANDLE_PID_TYPE;
typedef uint64_t DOCA_APSH_HANDLE_VALUE_TYPE;
typedef uint64_t DOCA_APSH_HANDLE_TABLE_ENTRY_TYPE;
typedef const char *DOCA_APSH_HANDLE_TYPE_TYPE;
typedef uint64_t DOCA_APSH_HANDLE_ACCESS_TYPE;
typedef const char *DOCA_APSH_HANDLE_NAME_TYPE;

/* LDR modules (Windows). */
enum doca_apsh_ldrmodule_attr {
	DOCA_APSH_LDRMODULE_PID = 0,
	DOCA_APSH_LDRMODULE_BASE_ADDRESS = 2,
	DOCA_APSH_LDRMODULE_LIBRARY_PATH = 3,
	DOCA_APSH_LDRMODULE_WINDOWS_DLL_NAME = 1000,
	DOCA_APSH_LDRMODULE_WINDOWS_SIZE_OF_IMAGE = 1001,
	DOCA_APSH_LDRMODULE_WINDOWS_INLOAD = 1002,
	DOCA_APSH_LDRMODULE_WINDOWS_INMEM = 1003,
	DOCA_APSH_LDRMODULE_WINDOWS_ININIT = 1004,
};

typedef uint32_t DOCA_APSH_LDRMODULE_PID_TYPE;
typedef uint64_t DOCA_APSH_LDRMODULE_BASE_ADDRESS_TYPE;
typedef const char *DOCA_APSH_LDRMODULE_LIBRARY_PATH_TYPE;
typedef const char *DOCA_APSH_LDRMODULE_WINDOWS_DLL_NAME_TYPE;
typedef uint32_t DOCA_APSH_LDRMODULE_WINDOWS_SIZE_OF_IMAGE_TYPE;
typedef bool DOCA_APSH_LDRMODULE_WINDOWS_INLOAD_TYPE;
typedef bool DOCA_APSH_LDRMODULE_WINDOWS_INMEM_TYPE;
typedef bool DOCA_APSH_LDRMODULE_WINDOWS_ININIT_TYPE;

/* Suspected code injections. */
enum doca_apsh_injection_detect_attr {
	DOCA_APSH_INJECTION_DETECT_PID,
	DOCA_APSH_INJECTION_DETECT_VAD_START,
	DOCA_APSH_INJECTION_DETECT_VAD_END,
	DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION,
	DOCA_APSH_INJECTION_DETECT_VAD_TAG,
	DOCA_APSH_INJECTION_DETECT_VAD_FILE_PATH,
	DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START,
	DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_END,
};

typedef uint32_t DOCA_APSH_INJECTION_DETECT_PID_TYPE;
typedef uint64_t DOCA_APSH_INJECTION_DETECT_VAD_START_TYPE;
typedef uint64_t DOCA_APSH_INJECTION_DETECT_VAD_END_TYPE;
typedef const char *DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION_TYPE;
typedef const char *DOCA_APSH_INJECTION_DETECT_VAD_TAG_TYPE;
typedef const char *DOCA_APSH_INJECTION_DETECT_VAD_FILE_PATH_TYPE;
typedef uint64_t DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START_TYPE;
typedef uint64_t DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_END_TYPE;

/* Security identifiers (Windows). */
enum doca_apsh_sid_attr {
	DOCA_APSH_PROCESS_SID_PID = 0,
	DOCA_APSH_PROCESS_SID_STRING = 1,
	DOCA_APSH_PROCESS_SID_ATTRIBUTES = 2,
};

typedef uint32_t DOCA_APSH_PROCESS_SID_PID_TYPE;
typedef const char *DOCA_APSH_PROCESS_SID_STRING_TYPE;
typedef uint32_t DOCA_APSH_PROCESS_SID_ATTRIBUTES_TYPE;

/* Network connections. */
enum doca_apsh_netscan_attr {
	DOCA_APSH_NETSCAN_PID = 0,
	DOCA_APSH_NETSCAN_COMM = 1,
	DOCA_APSH_NETSCAN_PROTOCOL = 2, /* "TCPv4", "UDPv4", "TCPv6", "UDPv6" */
	DOCA_APSH_NETSCAN_LOCAL_ADDR = 3,
	DOCA_APSH_NETSCAN_REMOTE_ADDR = 4,
	DOCA_APSH_NETSCAN_LOCAL_PORT = 5,
	DOCA_APSH_NETSCAN_REMOTE_PORT = 6,
	DOCA_APSH_NETSCAN_STATE = 7,
	DOCA_APSH_NETSCAN_TIME = 8,
	/* Added after DOCA 2.5 (a later DOCA's name and value): the socket's network namespace. */
	DOCA_APSH_NETSCAN_LINUX_NET_NAMESPACE = 2005,
};

typedef uint32_t DOCA_APSH_NETSCAN_PID_TYPE;
typedef const char *DOCA_APSH_NETSCAN_COMM_TYPE;
typedef const char *DOCA_APSH_NETSCAN_PROTOCOL_TYPE;
typedef const char *DOCA_APSH_NETSCAN_LOCAL_ADDR_TYPE;
typedef const char *DOCA_APSH_NETSCAN_REMOTE_ADDR_TYPE;
typedef uint16_t DOCA_APSH_NETSCAN_LOCAL_PORT_TYPE;
typedef uint16_t DOCA_APSH_NETSCAN_REMOTE_PORT_TYPE;
typedef const char *DOCA_APSH_NETSCAN_STATE_TYPE;
typedef const char *DOCA_APSH_NETSCAN_TIME_TYPE;
typedef uint32_t DOCA_APSH_NETSCAN_LINUX_NET_NAMESPACE_TYPE;

/* Process parameters. */
enum doca_apsh_process_parameters_attr {
	DOCA_APSH_PROCESS_PARAMETERS_PID = 0,
	DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE = 1,
	DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR = 2,
	DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH = 3,
};

typedef uint32_t DOCA_APSH_PROCESS_PARAMETERS_PID_TYPE;
typedef const char *DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE_TYPE;
typedef uint64_t DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR_TYPE;
typedef const char *DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH_TYPE;

/* YARA. */
enum doca_apsh_yara_rule {
	DOCA_APSH_YARA_RULE_HELLO_WORLD = 0,              /* rule "Hello_World" */
	DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION = 1, /* rule "Reflective_Dll_Injection" */
	DOCA_APSH_YARA_RULE_MIMIKATZ = 2,                 /* rule "Mimikatz" */
};

/* Bitmask. */
enum doca_apsh_yara_scan_type {
	DOCA_APSH_YARA_SCAN_VMA = 1,       /* every memory area; overrides the other bits */
	DOCA_APSH_YARA_SCAN_HEAP = 1 << 1, /* heap areas only */
};

enum doca_apsh_yara_attr {
	DOCA_APSH_YARA_PID = 0,
	DOCA_APSH_YARA_COMM = 1,
	DOCA_APSH_YARA_RULE = 2,
	DOCA_APSH_YARA_MATCH_WINDOW_ADDR = 3,
	DOCA_APSH_YARA_MATCH_WINDOW_LEN = 4,
};

typedef uint32_t DOCA_APSH_YARA_PID_TYPE;
typedef const char *DOCA_APSH_YARA_COMM_TYPE;
typedef const char *DOCA_APSH_YARA_RULE_TYPE;
typedef uint64_t DOCA_APSH_YARA_MATCH_WINDOW_ADDR_TYPE;
typedef uint64_t DOCA_APSH_YARA_MATCH_WINDOW_LEN_TYPE;

/* Containers (added after DOCA 2.5, as later DOCA releases name them; more attributes in
 * softdpu/apsh.h). */
enum doca_apsh_container_attr {
	DOCA_APSH_CONTAINER_ID = 0, /* the runtime's container ID, or "mnt:[N]", "pid:[N]", "net:[N]" */
};

typedef const char *DOCA_APSH_CONTAINER_ID_TYPE;

#ifdef __cplusplus
}
#endif

#endif /* DOCA_APSH_ATTR_H_ */
