// Anything a progress engine drives: contexts and graphs.
#pragma once

namespace softdpu::exec {

class Progressable {
public:
	virtual ~Progressable() = default;
	// Runs ready completions and state changes; true if anything happened.
	virtual bool progress() = 0;
	// True if progress() would do something now (used to arm notifications without losing one).
	virtual bool has_pending_work() const = 0;
	// Tasks submitted and not yet delivered.
	virtual size_t inflight() const = 0;
};

} // namespace softdpu::exec
