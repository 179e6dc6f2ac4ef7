// The device's firmware command interface as DevX reaches it, with the kernel's DevX checks in
// front (notes: devx-software-device.md §5-§6): one PRM inbox in, one PRM outbox back, exactly to
// the mailbox layout (prm.hpp). One CommandProcessor per context; it owns the context's DevX
// objects (umems, UARs, PDs, transport domains, mkeys, CQs, QPs) and frees what is left when the
// context closes.
//
// Return conventions, the kernel's: 0 (the outbox holds the answer, status OK); EREMOTEIO (the
// device refused the command: the outbox holds status and syndrome); EINVAL for what the kernel
// refuses before the device sees it (a mailbox shorter than its header or the command's inbox, a
// non-zero vhca_tunnel_id, an opcode outside the method's whitelist, a query or modify that names
// another object than its handle); EOPNOTSUPP for a command on a context without DevX other than
// the queries the kernel lets every context send (QUERY_HCA_CAP, QUERY_HCA_VPORT_CONTEXT). An
// outbox shorter than the command's output gets its first outlen bytes; bytes past it are zeroed.
//
// Syndromes are softdpu's own (real firmware's are opaque), one per distinct check, stable; the
// table is in docs/mlx5.md ("The DevX command processor").
#pragma once

#include "mlx5/devx/device_caps.hpp"
#include "mlx5/devx/objects.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace softdpu::mlx5::devx {

// The DevX methods: each has its opcode whitelist (§6.2).
enum class Method { create, query, modify, destroy, general };

enum Syndrome : uint32_t {
	kSyndromeUnknownOpcode = 0x5d000001,
	kSyndromeUnknownCapType = 0x5d000002,
	kSyndromeOtherFunction = 0x5d000003,
	kSyndromeUnknownOpMod = 0x5d000004,
	kSyndromeNoSuchPd = 0x5d000010,
	kSyndromeNoSuchTd = 0x5d000011,
	kSyndromeNoSuchUmem = 0x5d000012,
	kSyndromeNoSuchMkey = 0x5d000013,
	kSyndromeNoSuchCq = 0x5d000014,
	kSyndromeNoSuchQp = 0x5d000015,
	kSyndromeBadUar = 0x5d000016,
	kSyndromeUmemRange = 0x5d000020,
	kSyndromeMkeyAccessMode = 0x5d000021,
	kSyndromeMkeyLength = 0x5d000022,
	kSyndromeCqeSize = 0x5d000023,
	kSyndromeCqSize = 0x5d000024,
	kSyndromeEqn = 0x5d000025,
	kSyndromeCqeCompression = 0x5d000026,
	kSyndromeQpServiceType = 0x5d000027,
	kSyndromeQpSize = 0x5d000028,
	kSyndromeRqType = 0x5d000029,
	kSyndromeQpAttributes = 0x5d00002a,
	kSyndromeQpState = 0x5d00002b,
	kSyndromeOtherVport = 0x5d00002c,
	kSyndromePortNum = 0x5d00002d,
	kSyndromeGidIndex = 0x5d00002e,
	kSyndromeOptParam = 0x5d00002f,
	kSyndromePdBusy = 0x5d000030,
	kSyndromeCqBusy = 0x5d000031,
	kSyndromeNoResources = 0x5d000040,
};

class CommandProcessor {
public:
	// `devx`: the context was opened with MLX5DV_CONTEXT_FLAGS_DEVX; it gets a uid of its own.
	CommandProcessor(ibv_context *context, const DeviceCaps &caps, bool devx) noexcept;
	~CommandProcessor();
	CommandProcessor(const CommandProcessor &) = delete;
	CommandProcessor &operator=(const CommandProcessor &) = delete;

	bool devx() const noexcept { return devx_; }
	uint16_t uid() const noexcept { return uid_; }
	ibv_context *context() const noexcept { return context_; }
	const DeviceCaps &caps() const noexcept { return caps_; }

	// mlx5dv_devx_general_cmd.
	int general(const void *in, size_t inlen, void *out, size_t outlen) noexcept;
	// mlx5dv_devx_obj_create: the object, or null with errno (EREMOTEIO: the outbox says why).
	Object *create(const void *in, size_t inlen, void *out, size_t outlen) noexcept;
	// mlx5dv_devx_obj_query / _modify on `object` (one of this processor's).
	int query(Object &object, const void *in, size_t inlen, void *out, size_t outlen) noexcept;
	int modify(Object &object, const void *in, size_t inlen, void *out, size_t outlen) noexcept;
	// mlx5dv_devx_obj_destroy: replays the saved destroy command. 0, or the errno of the device's
	// status (EBUSY for RES_BUSY: the object is still in use and stays valid).
	int destroy(Object *object) noexcept;
	// mlx5dv_devx_{cq,qp}_{query,modify} on a CQ or QP made through verbs on this context.
	int on_verbs_cq(Method method, ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen) noexcept;
	int on_verbs_qp(Method method, ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen) noexcept;

	// mlx5dv_devx_umem_reg(_ex): null with errno.
	Umem *register_umem(void *addr, size_t size, uint32_t access, uint64_t pgsz_bitmap) noexcept;
	int deregister_umem(Umem *umem) noexcept;
	// mlx5dv_devx_alloc_uar: null with errno.
	Uar *alloc_uar(uint32_t flags) noexcept;
	void free_uar(Uar *uar) noexcept;

	// The engine CQ of a DevX CQ object: null (errno EINVAL) for an object that is not a CQ.
	wq::Cq *engine_cq(const Object &object) noexcept;

private:
	// One command on its way to the device: the inbox is the processor's copy (uid written).
	struct Command {
		const uint8_t *in = nullptr;
		size_t inlen = 0;
		void *out = nullptr;
		size_t outlen = 0;
		uint32_t opcode = 0;
		uint32_t op_mod = 0;
		uint32_t created_id = 0; // set by a create that succeeded
	};
	using Handler = int (CommandProcessor::*)(Command &command);

	// The kernel's checks, then the device. `target`: the object of a query/modify (its create
	// opcode and id), or null.
	int run(Method method, uint32_t target_opcode, uint32_t target_id, const void *in, size_t inlen, void *out,
		size_t outlen, uint32_t *created_id) noexcept;
	int dispatch(Command &command) noexcept;
	int destroy_locked(const uint8_t *in) noexcept;
	void release_all() noexcept;

	// Commands (commands_*.cpp): 0, EREMOTEIO (fail() wrote the outbox), or EINVAL (short inbox).
	int query_hca_cap(Command &command);
	int query_nic_vport_context(Command &command);
	int query_hca_vport_context(Command &command);
	int query_hca_vport_gid(Command &command);
	int alloc_pd(Command &command);
	int dealloc_pd(Command &command);
	int alloc_transport_domain(Command &command);
	int dealloc_transport_domain(Command &command);
	int alloc_uar_command(Command &command);
	int dealloc_uar_command(Command &command);
	int create_mkey(Command &command);
	int query_mkey(Command &command);
	int destroy_mkey(Command &command);
	int create_cq(Command &command);
	int query_cq(Command &command);
	int modify_cq(Command &command);
	int destroy_cq(Command &command);
	int create_qp(Command &command);
	int query_qp(Command &command);
	int modify_qp(Command &command);
	int destroy_qp(Command &command);

	// Lookups of what a command names, on this context only (an object of another context is
	// unknown here: BAD_RES, as the firmware answers for another uid's resource).
	ibv_pd *find_pd(uint32_t pdn) noexcept;
	Umem *find_umem(uint32_t umem_id) noexcept;
	Uar *make_uar_locked() noexcept;
	void free_uar_locked(Uar *uar) noexcept;
	bool uar_allocated(uint32_t page_id) noexcept;
	Uar *find_uar(uint32_t page_id) noexcept;
	// A CQ lets go of its UAR page: unmapped if mlx5dv_devx_free_uar came meanwhile.
	void release_uar(Uar *uar) noexcept;
	// The verbs QP a QP command names: a DevX QP's backing QP, or a verbs QP of this context
	// (on_verbs_qp). Null: no such QP.
	ibv_qp *find_qp(uint32_t qpn, Qp **devx_qp) noexcept;

	ibv_context *context_;
	DeviceCaps caps_;
	bool devx_;
	uint16_t uid_;
	std::mutex mutex_;           // every command and table below
	ibv_qp *verbs_qp_ = nullptr; // the verbs QP of on_verbs_qp while it runs
	ibv_cq *verbs_cq_ = nullptr; // the verbs CQ of on_verbs_cq while it runs
	std::map<uint32_t, std::unique_ptr<Umem>> umems_;
	std::map<uint32_t, std::unique_ptr<Uar>> uars_;
	std::map<uint32_t, Pd> pds_;
	std::set<uint32_t> tds_;
	std::map<uint32_t, Mkey> mkeys_; // by mkey_index
	std::map<uint32_t, Cq> cqs_;     // by cqn
	std::map<uint32_t, Qp> qps_;     // by qpn
	std::set<Object *> objects_;
};

// Fills the outbox header of a refused command: EREMOTEIO.
int fail(void *out, size_t outlen, uint8_t status, uint32_t syndrome) noexcept;
// Copies the device's answer into the caller's outbox: what fits, the rest zeroed.
void copy_out(const uint8_t *answer, size_t answer_bytes, void *out, size_t outlen) noexcept;
// The 16-byte outbox of a command that succeeded: status OK and `id` at bit 0x48 (what a create
// returns; 0 for the others).
int answer_id(void *out, size_t outlen, uint32_t id) noexcept;
// A doorbell record's bytes (CQ: consumer counter and arm word; QP: receive and send counters).
inline constexpr uint64_t kDoorbellBytes = 8;
// The errno value the kernel gives for a command status (rdma-core's mlx5_cmd_status_to_err).
int status_errno(uint8_t status) noexcept;

} // namespace softdpu::mlx5::devx
