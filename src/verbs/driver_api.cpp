// rdma-core's private interface to its providers (IBVERBS_PRIVATE_34, rdma-core's driver.h, which
// Debian does not install). softdpu's libibverbs loads no provider: its device is built in. These
// symbols exist so that libraries linked against Debian's rdma-core load beside it: the providers
// libmlx5.so.1 and libefa.so.1 (their constructors call verbs_register_driver_34, which records
// nothing) and librdmacm.so.1. A provider command reached anyway fails with EOPNOTSUPP; the one
// entry point a program calls directly, ibv_query_gid_type (ibv_devinfo does), is implemented.
#include "verbs/verbs.hpp"

#include <cerrno>
#include <cstdarg>
#include <cstdio>

using namespace softdpu::verbs;

namespace {

// rdma-core's enum ibv_gid_type_sysfs.
enum GidTypeSysfs { gid_type_sysfs_ib_roce_v1 = 0, gid_type_sysfs_roce_v2 = 1 };

} // namespace

extern "C" {

int ibv_query_gid_type(ibv_context *context, uint8_t port_num, unsigned int index, int *type)
{
	if (context == nullptr || type == nullptr) {
		errno = EINVAL;
		return -1;
	}
	ibv_gid_entry entry{};
	const int error = query_gid_entry(*Context::from(context), port_num, index, &entry);
	if (error != 0) {
		errno = error;
		return -1;
	}
	*type = entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? gid_type_sysfs_roce_v2 : gid_type_sysfs_ib_roce_v1;
	return 0;
}

void verbs_register_driver_34(void *ops)
{
	(void)ops; // a provider loaded beside softdpu's device registers nothing here
}

void __verbs_log(void *context, int level, const char *format, ...)
{
	(void)context;
	(void)level;
	(void)format;
}

// Every other private entry point: a provider command, refused. (The macros define functions:
// their replacement lists cannot be parenthesized.)
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SOFTDPU_REFUSED_COMMAND(name)                                                                                  \
	int name(void)                                                                                                 \
	{                                                                                                              \
		return EOPNOTSUPP;                                                                                     \
	}
#define SOFTDPU_REFUSED_POINTER(name)                                                                                  \
	void *name(void)                                                                                               \
	{                                                                                                              \
		errno = EOPNOTSUPP;                                                                                    \
		return nullptr;                                                                                        \
	}
// NOLINTEND(bugprone-macro-parentheses)

SOFTDPU_REFUSED_COMMAND(__ioctl_final_num_attrs)
SOFTDPU_REFUSED_POINTER(_verbs_init_and_alloc_context)
SOFTDPU_REFUSED_COMMAND(execute_ioctl)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_advise_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_alloc_dm)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_alloc_mw)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_alloc_pd)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_attach_mcast)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_close_xrcd)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_ah)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_counters)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_cq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_cq_ex)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_flow)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_flow_action_esp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_qp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_qp_ex)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_qp_ex2)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_rwq_ind_table)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_srq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_srq_ex)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_create_wq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_dealloc_mw)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_dealloc_pd)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_dereg_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_ah)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_counters)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_cq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_flow)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_flow_action)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_qp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_rwq_ind_table)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_srq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_destroy_wq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_detach_mcast)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_free_dm)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_get_context)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_cq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_flow_action_esp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_qp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_qp_ex)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_srq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_modify_wq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_open_qp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_open_xrcd)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_poll_cq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_post_recv)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_post_send)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_post_srq_recv)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_context)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_device_any)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_port)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_qp)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_query_srq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_read_counters)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_reg_dm_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_reg_dmabuf_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_reg_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_req_notify_cq)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_rereg_mr)
SOFTDPU_REFUSED_COMMAND(ibv_cmd_resize_cq)
SOFTDPU_REFUSED_COMMAND(ibv_read_ibdev_sysfs_file)
SOFTDPU_REFUSED_COMMAND(verbs_allow_disassociate_destroy)
SOFTDPU_REFUSED_COMMAND(verbs_init_cq)
SOFTDPU_REFUSED_POINTER(verbs_open_device)
SOFTDPU_REFUSED_COMMAND(verbs_set_ops)
SOFTDPU_REFUSED_COMMAND(verbs_uninit_context)

} // extern "C"
