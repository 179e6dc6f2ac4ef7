/*
 * The string attribute types of doca_apsh_attr.h are those of DOCA 2.5: `const char *` for every
 * value App Shield hands out, `char *` for the three system configuration paths the application
 * passes in. Compiled as C11 (_Generic) and, through a generated wrapper, as C++20 (std::is_same).
 */
#include <doca_apsh.h>
#include <doca_apsh_attr.h>

#ifdef __cplusplus
#include <type_traits>
#define SAME_TYPE(T, U) static_assert(std::is_same<T, U>::value, #T " is " #U " in DOCA 2.5")
#define SAME_EXPR_TYPE(E, U) static_assert(std::is_same<decltype(E), U>::value, #E " is " #U " in DOCA 2.5")
#else
/* NOLINTNEXTLINE(bugprone-macro-parentheses): U is a type name in a _Generic association */
#define SAME_TYPE(T, U) _Static_assert(_Generic((T)0, U : 1, default : 0), #T " is " #U " in DOCA 2.5")
/* NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define SAME_EXPR_TYPE(E, U) _Static_assert(_Generic((E), U : 1, default : 0), #E " is " #U " in DOCA 2.5")
#endif

SAME_TYPE(DOCA_APSH_OS_SYMBOL_MAP_TYPE, char *);
SAME_TYPE(DOCA_APSH_MEM_REGION_TYPE, char *);
SAME_TYPE(DOCA_APSH_KPGD_FILE_TYPE, char *);
SAME_TYPE(DOCA_APSH_PROCESS_COMM_TYPE, const char *);
SAME_TYPE(DOCA_APSH_THREAD_LINUX_PROC_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_THREAD_LINUX_THREAD_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_LIB_LIBRARY_PATH_TYPE, const char *);
SAME_TYPE(DOCA_APSH_LIB_WINDOWS_DLL_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_VMA_PROTECTION_TYPE, const char *);
SAME_TYPE(DOCA_APSH_VMA_PROCESS_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_VMA_FILE_PATH_TYPE, const char *);
SAME_TYPE(DOCA_APSH_VMA_WINDOWS_TAG_TYPE, const char *);
SAME_TYPE(DOCA_APSH_ATTESTATION_COMM_TYPE, const char *);
SAME_TYPE(DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA_TYPE, const char *);
SAME_TYPE(DOCA_APSH_ATTESTATION_PROTECTION_TYPE, const char *);
SAME_TYPE(DOCA_APSH_MODULES_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_PRIVILEGES_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_ENVARS_VARIABLE_TYPE, const char *);
SAME_TYPE(DOCA_APSH_ENVARS_VALUE_TYPE, const char *);
SAME_TYPE(DOCA_APSH_HANDLE_TYPE_TYPE, const char *);
SAME_TYPE(DOCA_APSH_HANDLE_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_LDRMODULE_LIBRARY_PATH_TYPE, const char *);
SAME_TYPE(DOCA_APSH_LDRMODULE_WINDOWS_DLL_NAME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_CONTAINER_ID_TYPE, const char *); /* added after DOCA 2.5, as DOCA names it later */
SAME_TYPE(DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION_TYPE, const char *);
SAME_TYPE(DOCA_APSH_INJECTION_DETECT_VAD_TAG_TYPE, const char *);
SAME_TYPE(DOCA_APSH_INJECTION_DETECT_VAD_FILE_PATH_TYPE, const char *);
SAME_TYPE(DOCA_APSH_PROCESS_SID_STRING_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_COMM_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_PROTOCOL_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_LOCAL_ADDR_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_REMOTE_ADDR_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_STATE_TYPE, const char *);
SAME_TYPE(DOCA_APSH_NETSCAN_TIME_TYPE, const char *);
SAME_TYPE(DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE_TYPE, const char *);
SAME_TYPE(DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH_TYPE, const char *);
SAME_TYPE(DOCA_APSH_YARA_COMM_TYPE, const char *);
SAME_TYPE(DOCA_APSH_YARA_RULE_TYPE, const char *);

/* What the typed getters return (the macros cast to the attribute's type). */
void headers_apsh_attr_use(struct doca_apsh_process *process, struct doca_apsh_yara *yara);

void headers_apsh_attr_use(struct doca_apsh_process *process, struct doca_apsh_yara *yara)
{
	SAME_EXPR_TYPE(doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_COMM), const char *);
	SAME_EXPR_TYPE(doca_apsh_yara_info_get(yara, DOCA_APSH_YARA_RULE), const char *);
	(void)process;
	(void)yara;
}
