// The device's firmware command interface as DevX reaches it (mlx5dv_devx_general_cmd and, with
// issue 21, the object commands): one PRM inbox in, one PRM outbox back, exactly to the mailbox
// layout (prm.hpp). A command the device refuses comes back with a status and a syndrome in the
// outbox and EREMOTEIO, as the kernel returns a failed firmware command; a mailbox the driver
// cannot even pass on gives a plain errno value.
//
// Commands: QUERY_HCA_CAP for the general device capabilities and the RoCE capabilities (maximum
// and current values are the same). Syndromes are softdpu's own (real firmware's are opaque), one
// per distinct check, stable:
//
//   kSyndromeUnknownOpcode     0x5d000001  opcode not implemented by the device   (BAD_OP)
//   kSyndromeUnknownCapType    0x5d000002  QUERY_HCA_CAP of an unsupported type   (BAD_OP)
//   kSyndromeOtherFunction     0x5d000003  QUERY_HCA_CAP of another function      (BAD_PARAM)
#pragma once

#include "mlx5/devx/device_caps.hpp"

#include <cstddef>
#include <cstdint>

namespace softdpu::mlx5::devx {

class CommandProcessor {
public:
	enum Syndrome : uint32_t {
		kSyndromeUnknownOpcode = 0x5d000001,
		kSyndromeUnknownCapType = 0x5d000002,
		kSyndromeOtherFunction = 0x5d000003,
	};

	explicit CommandProcessor(const DeviceCaps &caps) noexcept : caps_(caps) {}

	// Runs one command. `devx` says whether the context was opened with MLX5DV_CONTEXT_FLAGS_DEVX:
	// without it only the commands the kernel lets every context send (QUERY_HCA_CAP) run.
	// Returns 0 (the outbox holds the answer, status OK); EREMOTEIO (the outbox holds the failed
	// status and its syndrome); EINVAL when a mailbox is shorter than its header or the command's
	// inbox, or vhca_tunnel_id is set (the kernel refuses those before the device sees them);
	// EOPNOTSUPP for another command on a context without DevX. Bytes of the outbox past the
	// command's output are zeroed; an outbox shorter than the output gets its first outlen bytes.
	int execute(const void *in, size_t inlen, void *out, size_t outlen, bool devx) const noexcept;

	const DeviceCaps &caps() const noexcept { return caps_; }

private:
	int query_hca_cap(const void *in, size_t inlen, void *out, size_t outlen) const noexcept;

	DeviceCaps caps_;
};

} // namespace softdpu::mlx5::devx
