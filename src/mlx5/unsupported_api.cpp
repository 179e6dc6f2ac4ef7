// The mlx5dv functions softdpu's device does not offer (yet): each gives rdma-core's documented
// failure for a device without the feature, never a crash. Pointers: null with errno EOPNOTSUPP;
// int results: EOPNOTSUPP (the dump functions: -EOPNOTSUPP, as rdma-core's return negative errno
// values; mlx5dv_vfio_get_events_fd: -1 with errno); ssize_t: -1 with errno. The void destroy and
// free functions have nothing to free, as their objects can never be made; the two DR domain
// setters have no domain to set.
//
// The DevX object, umem, UAR, EQ-number and asynchronous command functions are in mlx5dv_api.cpp,
// mlx5dv_init_obj in dv_obj.cpp and the event channels in event_channel_api.cpp (issue 21).
#include <infiniband/mlx5dv.h>

#include <cerrno>

namespace {

template <typename T> T *unsupported() noexcept
{
	errno = EOPNOTSUPP;
	return nullptr;
}

} // namespace

// NOLINTBEGIN(readability-named-parameter): the parameters are unused; their names are comments

extern "C" {

int _mlx5dv_mkey_check(mlx5dv_mkey * /*mkey*/, mlx5dv_mkey_err * /*err_info*/, size_t /*err_info_size*/)
{
	return EOPNOTSUPP;
}

int _mlx5dv_query_port(ibv_context * /*context*/, uint32_t /*port_num*/, mlx5dv_port * /*info*/, size_t /*info_len*/)
{
	return EOPNOTSUPP;
}

ibv_dm *mlx5dv_alloc_dm(ibv_context * /*context*/, ibv_alloc_dm_attr * /*dm_attr*/,
			mlx5dv_alloc_dm_attr * /*mlx5_dm_attr*/)
{
	return unsupported<ibv_dm>();
}

mlx5dv_var *mlx5dv_alloc_var(ibv_context * /*context*/, uint32_t /*flags*/)
{
	return unsupported<mlx5dv_var>();
}

ibv_flow *mlx5dv_create_flow(mlx5dv_flow_matcher * /*matcher*/, mlx5dv_flow_match_parameters * /*match_value*/,
			     size_t /*num_actions*/, mlx5dv_flow_action_attr /*actions_attr*/[])
{
	return unsupported<ibv_flow>();
}

ibv_flow_action *mlx5dv_create_flow_action_esp(ibv_context * /*ctx*/, ibv_flow_action_esp_attr * /*esp*/,
					       mlx5dv_flow_action_esp * /*mlx5_attr*/)
{
	return unsupported<ibv_flow_action>();
}

ibv_flow_action *mlx5dv_create_flow_action_modify_header(ibv_context * /*ctx*/, size_t /*actions_sz*/,
							 uint64_t /*actions*/[],
							 enum mlx5dv_flow_table_type /*ft_type*/)
{
	return unsupported<ibv_flow_action>();
}

ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(ibv_context * /*ctx*/, size_t /*data_sz*/, void * /*data*/,
					  enum mlx5dv_flow_action_packet_reformat_type /*reformat_type*/,
					  enum mlx5dv_flow_table_type /*ft_type*/)
{
	return unsupported<ibv_flow_action>();
}

mlx5dv_flow_matcher *mlx5dv_create_flow_matcher(ibv_context * /*context*/, mlx5dv_flow_matcher_attr * /*matcher_attr*/)
{
	return unsupported<mlx5dv_flow_matcher>();
}

mlx5dv_mkey *mlx5dv_create_mkey(mlx5dv_mkey_init_attr * /*mkey_init_attr*/)
{
	return unsupported<mlx5dv_mkey>();
}

mlx5dv_steering_anchor *mlx5dv_create_steering_anchor(ibv_context * /*context*/, mlx5dv_steering_anchor_attr * /*attr*/)
{
	return unsupported<mlx5dv_steering_anchor>();
}

ibv_wq *mlx5dv_create_wq(ibv_context * /*context*/, ibv_wq_init_attr * /*wq_init_attr*/,
			 mlx5dv_wq_init_attr * /*mlx5_wq_attr*/)
{
	return unsupported<ibv_wq>();
}

int mlx5dv_crypto_login(ibv_context * /*context*/, mlx5dv_crypto_login_attr * /*login_attr*/)
{
	return EOPNOTSUPP;
}

mlx5dv_crypto_login_obj *mlx5dv_crypto_login_create(ibv_context * /*context*/,
						    mlx5dv_crypto_login_attr_ex * /*login_attr*/)
{
	return unsupported<mlx5dv_crypto_login_obj>();
}

int mlx5dv_crypto_login_destroy(mlx5dv_crypto_login_obj * /*crypto_login*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_crypto_login_query(mlx5dv_crypto_login_obj * /*crypto_login*/,
			      mlx5dv_crypto_login_query_attr * /*query_attr*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_crypto_login_query_state(ibv_context * /*context*/, enum mlx5dv_crypto_login_state * /*state*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_crypto_logout(ibv_context * /*context*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dci_stream_id_reset(ibv_qp * /*qp*/, uint16_t /*stream_id*/)
{
	return EOPNOTSUPP;
}

mlx5dv_dek *mlx5dv_dek_create(ibv_context * /*context*/, mlx5dv_dek_init_attr * /*init_attr*/)
{
	return unsupported<mlx5dv_dek>();
}

int mlx5dv_dek_destroy(mlx5dv_dek * /*dek*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dek_query(mlx5dv_dek * /*dek*/, mlx5dv_dek_attr * /*attr*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_destroy_flow_matcher(mlx5dv_flow_matcher * /*matcher*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_destroy_mkey(mlx5dv_mkey * /*mkey*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_destroy_steering_anchor(mlx5dv_steering_anchor * /*sa*/)
{
	return EOPNOTSUPP;
}

mlx5dv_devx_msi_vector *mlx5dv_devx_alloc_msi_vector(ibv_context * /*ibctx*/)
{
	return unsupported<mlx5dv_devx_msi_vector>();
}

mlx5dv_devx_eq *mlx5dv_devx_create_eq(ibv_context * /*ibctx*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/,
				      size_t /*outlen*/)
{
	return unsupported<mlx5dv_devx_eq>();
}

int mlx5dv_devx_destroy_eq(mlx5dv_devx_eq * /*eq*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_free_msi_vector(mlx5dv_devx_msi_vector * /*msi*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_ind_tbl_modify(ibv_rwq_ind_table * /*ind_tbl*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/,
			       size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_ind_tbl_query(ibv_rwq_ind_table * /*ind_tbl*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/,
			      size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_srq_modify(ibv_srq * /*srq*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/, size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_srq_query(ibv_srq * /*srq*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/, size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_wq_modify(ibv_wq * /*wq*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/, size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_devx_wq_query(ibv_wq * /*wq*/, const void * /*in*/, size_t /*inlen*/, void * /*out*/, size_t /*outlen*/)
{
	return EOPNOTSUPP;
}

void *mlx5dv_dm_map_op_addr(ibv_dm * /*dm*/, uint8_t /*op*/)
{
	return unsupported<void>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_aso(mlx5dv_dr_domain * /*domain*/, mlx5dv_devx_obj * /*devx_obj*/,
					      uint32_t /*offset*/, uint32_t /*flags*/, uint8_t /*return_reg_c*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_array(mlx5dv_dr_domain * /*domain*/, size_t /*num_dest*/,
						     mlx5dv_dr_action_dest_attr * /*dests*/[])
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_devx_tir(mlx5dv_devx_obj * /*devx_obj*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ib_port(mlx5dv_dr_domain * /*domain*/, uint32_t /*ib_port*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ibv_qp(ibv_qp * /*ibqp*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_root_table(mlx5dv_dr_table * /*table*/, uint16_t /*priority*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_table(mlx5dv_dr_table * /*table*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_dest_vport(mlx5dv_dr_domain * /*domain*/, uint32_t /*vport*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_flow_counter(mlx5dv_devx_obj * /*devx_obj*/, uint32_t /*offset*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_flow_meter(mlx5dv_dr_flow_meter_attr * /*attr*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_flow_sampler(mlx5dv_dr_flow_sampler_attr * /*attr*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_modify_header(mlx5dv_dr_domain * /*domain*/, uint32_t /*flags*/,
							size_t /*actions_sz*/, __be64 /*actions*/[])
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(mlx5dv_dr_domain * /*domain*/, uint32_t /*flags*/,
					enum mlx5dv_flow_action_packet_reformat_type /*reformat_type*/,
					size_t /*data_sz*/, void * /*data*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_push_vlan(mlx5dv_dr_domain * /*domain*/, __be32 /*vlan_hdr*/)
{
	return unsupported<mlx5dv_dr_action>();
}

mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t /*tag_value*/)
{
	return unsupported<mlx5dv_dr_action>();
}

int mlx5dv_dr_action_destroy(mlx5dv_dr_action * /*action*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dr_action_modify_aso(mlx5dv_dr_action * /*action*/, uint32_t /*offset*/, uint32_t /*flags*/,
				uint8_t /*return_reg_c*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dr_action_modify_flow_meter(mlx5dv_dr_action * /*action*/, mlx5dv_dr_flow_meter_attr * /*attr*/,
				       __be64 /*modify_field_select*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dr_aso_other_domain_link(mlx5dv_devx_obj * /*devx_obj*/, mlx5dv_dr_domain * /*peer_dmn*/,
				    mlx5dv_dr_domain * /*dmn*/, uint32_t /*flags*/, uint8_t /*return_reg_c*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dr_aso_other_domain_unlink(mlx5dv_devx_obj * /*devx_obj*/, mlx5dv_dr_domain * /*dmn*/)
{
	return EOPNOTSUPP;
}

void mlx5dv_dr_domain_allow_duplicate_rules(mlx5dv_dr_domain * /*domain*/, bool /*allow*/) {}

mlx5dv_dr_domain *mlx5dv_dr_domain_create(ibv_context * /*ctx*/, enum mlx5dv_dr_domain_type /*type*/)
{
	return unsupported<mlx5dv_dr_domain>();
}

int mlx5dv_dr_domain_destroy(mlx5dv_dr_domain * /*domain*/)
{
	return EOPNOTSUPP;
}

void mlx5dv_dr_domain_set_reclaim_device_memory(mlx5dv_dr_domain * /*dmn*/, bool /*enable*/) {}

int mlx5dv_dr_domain_sync(mlx5dv_dr_domain * /*domain*/, uint32_t /*flags*/)
{
	return EOPNOTSUPP;
}

mlx5dv_dr_matcher *mlx5dv_dr_matcher_create(mlx5dv_dr_table * /*table*/, uint16_t /*priority*/,
					    uint8_t /*match_criteria_enable*/, mlx5dv_flow_match_parameters * /*mask*/)
{
	return unsupported<mlx5dv_dr_matcher>();
}

int mlx5dv_dr_matcher_destroy(mlx5dv_dr_matcher * /*matcher*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dr_matcher_set_layout(mlx5dv_dr_matcher * /*matcher*/, mlx5dv_dr_matcher_layout * /*layout*/)
{
	return EOPNOTSUPP;
}

mlx5dv_dr_rule *mlx5dv_dr_rule_create(mlx5dv_dr_matcher * /*matcher*/, mlx5dv_flow_match_parameters * /*value*/,
				      size_t /*num_actions*/, mlx5dv_dr_action * /*actions*/[])
{
	return unsupported<mlx5dv_dr_rule>();
}

int mlx5dv_dr_rule_destroy(mlx5dv_dr_rule * /*rule*/)
{
	return EOPNOTSUPP;
}

mlx5dv_dr_table *mlx5dv_dr_table_create(mlx5dv_dr_domain * /*domain*/, uint32_t /*level*/)
{
	return unsupported<mlx5dv_dr_table>();
}

int mlx5dv_dr_table_destroy(mlx5dv_dr_table * /*table*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_dump_dr_domain(FILE * /*fout*/, mlx5dv_dr_domain * /*domain*/)
{
	return -EOPNOTSUPP; // rdma-core's dump functions return a negative errno value
}

int mlx5dv_dump_dr_matcher(FILE * /*fout*/, mlx5dv_dr_matcher * /*matcher*/)
{
	return -EOPNOTSUPP; // rdma-core's dump functions return a negative errno value
}

int mlx5dv_dump_dr_rule(FILE * /*fout*/, mlx5dv_dr_rule * /*rule*/)
{
	return -EOPNOTSUPP; // rdma-core's dump functions return a negative errno value
}

int mlx5dv_dump_dr_table(FILE * /*fout*/, mlx5dv_dr_table * /*table*/)
{
	return -EOPNOTSUPP; // rdma-core's dump functions return a negative errno value
}

void mlx5dv_free_var(mlx5dv_var * /*dv_var*/) {}

int mlx5dv_get_clock_info(ibv_context * /*context*/, mlx5dv_clock_info * /*clock_info*/)
{
	return EOPNOTSUPP;
}

ibv_device **mlx5dv_get_vfio_device_list(mlx5dv_vfio_context_attr * /*attr*/)
{
	return unsupported<ibv_device *>();
}

int mlx5dv_map_ah_to_qp(ibv_ah * /*ah*/, uint32_t /*qp_num*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_modify_qp_lag_port(ibv_qp * /*qp*/, uint8_t /*port_num*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_modify_qp_sched_elem(ibv_qp * /*qp*/, const mlx5dv_sched_leaf * /*requestor*/,
				const mlx5dv_sched_leaf * /*responder*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_modify_qp_udp_sport(ibv_qp * /*qp*/, uint16_t /*udp_sport*/)
{
	return EOPNOTSUPP;
}

mlx5dv_pp *mlx5dv_pp_alloc(ibv_context * /*context*/, size_t /*pp_context_sz*/, const void * /*pp_context*/,
			   uint32_t /*flags*/)
{
	return unsupported<mlx5dv_pp>();
}

void mlx5dv_pp_free(mlx5dv_pp * /*pp*/) {}

int mlx5dv_qp_cancel_posted_send_wrs(mlx5dv_qp_ex * /*mqp*/, uint64_t /*wr_id*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_query_qp_lag_port(ibv_qp * /*qp*/, uint8_t * /*port_num*/, uint8_t * /*active_port_num*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_reserved_qpn_alloc(ibv_context * /*ctx*/, uint32_t * /*qpn*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_reserved_qpn_dealloc(ibv_context * /*ctx*/, uint32_t /*qpn*/)
{
	return EOPNOTSUPP;
}

mlx5dv_sched_leaf *mlx5dv_sched_leaf_create(ibv_context * /*context*/, const mlx5dv_sched_attr * /*sched_attr*/)
{
	return unsupported<mlx5dv_sched_leaf>();
}

int mlx5dv_sched_leaf_destroy(mlx5dv_sched_leaf * /*leaf*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_sched_leaf_modify(mlx5dv_sched_leaf * /*leaf*/, const mlx5dv_sched_attr * /*sched_attr*/)
{
	return EOPNOTSUPP;
}

mlx5dv_sched_node *mlx5dv_sched_node_create(ibv_context * /*context*/, const mlx5dv_sched_attr * /*sched_attr*/)
{
	return unsupported<mlx5dv_sched_node>();
}

int mlx5dv_sched_node_destroy(mlx5dv_sched_node * /*node*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_sched_node_modify(mlx5dv_sched_node * /*node*/, const mlx5dv_sched_attr * /*sched_attr*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_set_context_attr(ibv_context * /*context*/, enum mlx5dv_set_ctx_attr_type /*type*/, void * /*attr*/)
{
	return EOPNOTSUPP;
}

int mlx5dv_vfio_get_events_fd(ibv_context * /*ibctx*/)
{
	errno = EOPNOTSUPP; // no VFIO context: no event descriptor
	return -1;
}

int mlx5dv_vfio_process_events(ibv_context * /*context*/)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
} // extern "C"

// NOLINTEND(readability-named-parameter)
